"""Every output a consumer parses, validated against that consumer's schema.

- the JSON report against docs/report.schema.json (JSON Schema 2020-12), for
  every fixture (stream level, a plan with a core limit, a baseline) and every
  real capture folder when ../shared/real-profiles is present;
- the JUnit XML of analyze and lint against the Jenkins xUnit schema (the whole
  document) and Maven Surefire's report schema (each <testsuite>), tests/data/junit/;
- lint's SARIF against the official SARIF 2.1.0 schema, tests/data/sarif/.

tests/data/README.md says where each schema comes from and under which licence.
"""

from __future__ import annotations

import copy
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from subprocess import run

import jsonschema  # the dev extra
import pytest
import xmlschema

import overlap_check
from overlap_check.judge.baseline import apply_baseline
from overlap_check.lint import lint_paths
from overlap_check.lint.render import render_junit, render_sarif
from overlap_check.model import CoreLimit, Options, Plan, Report
from overlap_check.model.errors import OverlapCheckError
from overlap_check.model.json_codec import to_dict
from overlap_check.report import junit

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
FIXTURES = sorted(path for path in (ROOT / "fixtures").iterdir() if path.is_dir())
PLAN = Plan(
    "moe-shared-expert",
    side="SharedExpert",
    dominator="GroupedMatmul",
    limit_core=CoreLimit(aicore=12, vectorcore=24),
)


def _reports(folder: Path) -> Iterator[tuple[str, Report]]:
    """The reports CI sees of one fixture: stream level, the plan, the plan against a baseline."""
    yield "streams", overlap_check.check([str(folder)], Options())
    planned = overlap_check.check([str(folder)], Options(plans=(PLAN,), fail_on_contention=True))
    yield "plan", planned
    base = overlap_check.check(
        [str(ROOT / "fixtures" / "real-dual-stream")], Options(plans=(PLAN,))
    )
    yield "baseline", apply_baseline(planned, base, 0.1)


@pytest.fixture(scope="module")
def reports() -> list[tuple[str, Report]]:
    return [(f"{folder.name}/{kind}", rep) for folder in FIXTURES for kind, rep in _reports(folder)]


def _report_schema() -> object:
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: object, document: object) -> list[str]:
    found = validator.iter_errors(document)  # type: ignore[attr-defined]
    return [f"{list(err.absolute_path)}: {err.message}" for err in found]


# --------------------------------------------------------------------------- JSON report


def test_every_fixture_report_matches_the_json_schema(reports: list[tuple[str, Report]]) -> None:
    validator = _report_schema()
    kinds = set()
    for name, rep in reports:
        document = json.loads(overlap_check.report.json.render(rep))
        assert _errors(validator, document) == [], name
        kinds |= {c["kind"] for c in (document["cores"] or {}).get("contention", [])}
    # the fixtures reach the parts of the schema that matter most
    assert {rep.verdict for _, rep in reports} == {"pass", "fail"}
    assert any(rep.baseline for _, rep in reports)
    assert any(rep.cores and rep.cores.violations for _, rep in reports)
    assert kinds == {"aicore", "vectorcore"}  # both shapes of a contention entry


def test_the_schema_rejects_what_a_report_must_not_hold(reports: list[tuple[str, Report]]) -> None:
    validator = _report_schema()
    document = to_dict(dict(reports)["fake-dual-stream/plan"])
    bad_pct = copy.deepcopy(document)
    bad_pct["plans"][0]["overlap_pct"] = 1.5  # a figure that cannot be
    unknown_key = copy.deepcopy(document)
    unknown_key["plans"][0]["overlap"] = 0.0
    lost_twin = copy.deepcopy(document)
    del lost_twin["runs"][0]["origin_ns_str"]
    for broken in (bad_pct, unknown_key, lost_twin):
        assert _errors(validator, broken)


def test_contention_keys_follow_the_kind() -> None:
    validator = _report_schema()
    entry = {"run": 3, "rank": 0, "start_us": 1.0, "duration_us": 5.0, "kernels": ["a"],
             "streams": [2, 3], "excess_block_us": 60.0, "start_ns": 2**62,
             "start_ns_str": str(2**62)}  # fmt: skip
    aicore = {"kind": "aicore", "aicore_demand": 36, "aicore_max": 24, **entry}
    vector = {"kind": "vectorcore", "vectorcore_demand": 60, "vectorcore_max": 48, **entry}
    mixed = {"kind": "vectorcore", "aicore_demand": 36, "aicore_max": 24, **entry}
    defs = validator.schema["$defs"]  # type: ignore[attr-defined]
    check = jsonschema.Draft202012Validator({"$defs": defs, "$ref": "#/$defs/contention"})
    assert _errors(check, aicore) == [] and _errors(check, vector) == []
    assert _errors(check, mixed)


def test_absolute_ns_twins_are_exact_strings(reports: list[tuple[str, Report]]) -> None:
    document = to_dict(dict(reports)["fake-dual-stream/plan"])
    run = document["runs"][0]
    assert run["origin_ns"] > 2**53  # a float64 reader would round it ...
    assert run["origin_ns_str"] == str(run["origin_ns"])  # ... the string stays exact
    barrier = document["plans"][0]["barrier_candidates"][0]
    assert int(barrier["start_ns_str"]) == barrier["start_ns"]


def test_real_capture_reports_match_the_json_schema(real_profiles: Path) -> None:
    validator = _report_schema()
    checked = 0
    for folder in sorted(path for path in real_profiles.iterdir() if path.is_dir()):
        try:
            rep = overlap_check.check([str(folder)], Options())
        except OverlapCheckError:
            continue  # what a capture the tool refuses looks like is test_readers_real's business
        assert _errors(validator, to_dict(rep)) == [], folder.name
        checked += 1
    assert checked >= 1


# --------------------------------------------------------------------------- JUnit


@pytest.fixture(scope="module")
def junit_schemas() -> tuple[object, object]:
    folder = DATA / "junit"
    return (
        xmlschema.XMLSchema(folder / "jenkins-xunit-junit-10.xsd"),
        xmlschema.XMLSchema(folder / "surefire-test-report-3.0.xsd"),
    )


def _assert_valid_junit(text: str, schemas: tuple[object, object], name: str) -> ET.Element:
    jenkins, surefire = schemas
    root = ET.fromstring(text.split("\n", 1)[1])  # validated as written, nothing removed
    errors = [str(err) for err in jenkins.iter_errors(root)]  # type: ignore[attr-defined]
    for suite in root.findall("testsuite"):  # a Surefire file holds one suite, no wrapper
        errors += [str(err) for err in surefire.iter_errors(suite)]  # type: ignore[attr-defined]
    assert errors == [], name
    return root


def test_every_fixture_junit_report_is_valid(
    reports: list[tuple[str, Report]], junit_schemas: tuple[object, object]
) -> None:
    skipped = 0
    for name, rep in reports:
        root = _assert_valid_junit(junit.render(rep), junit_schemas, name)
        for case in root.iter("testcase"):
            for element in case.findall("skipped"):
                skipped += 1
                # the reason is the element's text (GitLab) and its message (Jenkins)
                assert element.text and element.text == element.get("message")
                assert "provisional" in element.text
    assert skipped > 0  # the 3-run fixtures are provisional


def test_the_old_testsuites_skipped_attribute_is_what_the_schemas_reject(
    junit_schemas: tuple[object, object],
) -> None:
    """The check above has teeth: the attribute 0.1.0 wrote makes a document invalid."""
    document = junit.write("x", (junit.JUnitSuite("x", (junit.JUnitCase("c", "n"),)),))
    root = ET.fromstring(document.split("\n", 1)[1])
    root.set("skipped", "0")
    assert list(junit_schemas[0].iter_errors(root))  # type: ignore[attr-defined]


def test_lint_junit_and_sarif_are_valid(junit_schemas: tuple[object, object]) -> None:
    result = lint_paths([DATA / "lint"])
    assert result.findings  # the test data holds mistakes on purpose
    root = _assert_valid_junit(render_junit(result), junit_schemas, "lint")
    cases = list(root.iter("testcase"))
    assert len(cases) == len(result.files)
    schema = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    log = json.loads(render_sarif(result))
    assert _errors(jsonschema.Draft7Validator(schema), log) == []
    results = log["runs"][0]["results"]
    assert len(results) == len(result.findings)
    first, finding = results[0], result.findings[0]
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (first["ruleId"], region["startLine"], region["startColumn"]) == (
        finding.rule, finding.line, finding.col
    )  # fmt: skip


def test_lint_junit_testcases_name_their_file() -> None:
    result = lint_paths([DATA / "lint" / "moe_ge"])
    root = ET.fromstring(render_junit(result).split("\n", 1)[1])
    assert [case.get("name") for case in root.iter("testcase")] == list(result.files)
    # docs/ci.md: no `file` attribute, which the Jenkins xUnit schema rejects (below)
    assert all("file" not in case.attrib for case in root.iter("testcase"))


def test_a_testcase_file_attribute_is_what_the_schemas_reject(
    junit_schemas: tuple[object, object],
) -> None:
    """Why lint's JUnit names a case by its file and carries no `file` (docs/ci.md):
    GitLab reads that attribute, but both schemas reject it, and the Jenkins xUnit
    plugin skips a report that fails its schema."""
    result = lint_paths([DATA / "lint" / "moe_ge"])
    root = ET.fromstring(render_junit(result).split("\n", 1)[1])
    jenkins, surefire = junit_schemas
    assert list(jenkins.iter_errors(root)) == []  # type: ignore[attr-defined]
    for case in root.iter("testcase"):
        case.set("file", str(case.get("name")))
    assert list(jenkins.iter_errors(root))  # type: ignore[attr-defined]
    (suite,) = root.findall("testsuite")
    assert list(surefire.iter_errors(suite))  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- lint imports


def test_lint_imports_neither_polars_nor_numpy(tmp_path: Path) -> None:
    """Every lint format, --output and a config: only click (and tomli on 3.10) from outside
    the standard library, the two the pre-commit hook installs (.pre-commit-hooks.yaml)."""
    (tmp_path / "overlap-check.toml").write_text('[lint]\nignore = ["OC105"]\n')
    lint = ["lint", str(DATA / "lint"), "--config", str(tmp_path / "overlap-check.toml")]
    runs = [[*lint, "--format", f, "--output", str(tmp_path / f"x.{f}")]
            for f in ("text", "json", "github", "junit", "sarif")]  # fmt: skip
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from overlap_check.cli import cli\n"
        f"for args in {runs!r}:\n"
        "    result = CliRunner().invoke(cli, args)\n"
        "    assert result.exit_code == 1, result.output\n"
        "std = set(sys.stdlib_module_names)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} - std - {'overlap_check'}))\n"
    )
    done = run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    imported = [name for name in eval(done.stdout or "[]") if not name.startswith("_")]
    assert (done.returncode, done.stderr) == (0, "")
    assert imported == (["click"] if sys.version_info >= (3, 11) else ["click", "tomli"])
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    wanted = """["--no-deps", "click>=8.2", "tomli>=2.0; python_version < '3.11'"]"""
    assert f"additional_dependencies: {wanted}" in hooks
