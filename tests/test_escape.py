"""Names from a capture or a config reach no reader raw (escape.py, issue 26).

A hostile plan name (a config file a PR author controls) and a hostile lint file
name go through every format and stderr: no line may start a GitHub workflow
command, no control, escape, bidi or zero-width character may be printed raw, the
Markdown may hold no link, image, mention or HTML from a name (rendered by a
CommonMark renderer), JSON keeps the exact name, JUnit stays valid for Jenkins,
Surefire and xunitparser.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
import xunitparser  # the dev extra
from click.testing import CliRunner
from markdown_it import MarkdownIt  # the dev extra

from overlap_check.cli import cli
from overlap_check.model import Report, Thresholds
from overlap_check.report import junit
from overlap_check.report.escape import guarded, json_text, markdown, shown

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = str(ROOT / "fixtures" / "fake-dual-stream")
JUNIT_SCHEMAS = ROOT / "tests" / "data" / "junit"
# a newline then a workflow command, a terminal escape (clear screen), a bidi override, a
# zero-width space, then a mention, a link, an image, HTML, an issue and a bare www name
HOSTILE = (
    "evil\n::error::pwned\r##[error]again\x1b[2J\u202e\u200b @team [l](http://e.com) "
    "![i](https://e.com/i.png) <img src=x onerror=alert(1)> #12 www.e.com *b*"
)
RAW = ("\x1b", "\r", "\u202e", "\u200b", "\x9b")
COMMAND_LINE = re.compile(r"^\s*(::|##\[)", re.MULTILINE)


def _hostile_config(folder: Path) -> Path:
    config = folder / "overlap-check.toml"
    name = json.dumps(HOSTILE)  # a TOML basic string is a JSON string here
    config.write_text(
        f'[[plan]]\nname = {name}\nside = "SharedExpert"\ndominator = "GroupedMatmul"\n',
        encoding="utf-8",
    )
    return config


def _no_raw(text: str) -> None:
    assert not [char for char in RAW if char in text]


# --------------------------------------------------------------------------- the functions


def test_every_control_format_and_separator_character_is_shown_escaped() -> None:
    invisible = [
        chr(point)
        for point in range(sys.maxunicode + 1)
        if unicodedata.category(chr(point)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
    ]
    assert len(invisible) > 2000
    left = [char for char in invisible if shown(char) == char or not shown(char).isascii()]
    assert left == []


def test_shown_writes_them_as_python_would_and_leaves_the_rest() -> None:
    assert shown("a\nb\x1b[2J\u202ec\u200b\U000e0041\t") == (
        "a\\nb\\x1b[2J\\u202ec\\u200b\\U000e0041\\t"
    )
    assert shown("aclnnMatmul_µs 算子 [x]") == "aclnnMatmul_µs 算子 [x]"


def test_guarded_lines_never_start_a_workflow_command() -> None:
    text = guarded("ok :: fine\n  ::error::x\n##[warning]y\n::")
    assert COMMAND_LINE.findall(text) == []
    assert text == "ok :: fine\n  \\x3a:error::x\n\\x23#[warning]y\n\\x3a:"


def test_json_text_keeps_the_values() -> None:
    document = json.dumps({"name": HOSTILE + "\x85"}, ensure_ascii=False)
    escaped = json_text(document)
    _no_raw(escaped)
    assert json.loads(escaped) == {"name": HOSTILE + "\x85"}


def test_json_text_of_an_ascii_document_escapes_its_del_alone() -> None:
    # ASCII but for nothing: no scan beyond isascii and one search for DEL (0x7f), the
    # only invisible character in ASCII that the JSON encoder leaves raw
    plain = json.dumps({"name": "GroupedMatmul", "line": "a\tb"})
    assert json_text(plain) is plain
    deleted = json.dumps({"name": "Grouped\x7fMatmul"})
    assert json_text(deleted) == '{"name": "Grouped\\u007fMatmul"}'


def _tokens(text: str) -> list[object]:
    def walk(tokens: list[object]) -> list[object]:
        found = []
        for token in tokens:
            found.append(token)
            found += walk(getattr(token, "children", None) or [])
        return found

    return walk(MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text))


def _assert_inert_markdown(text: str, name_part: str = "team") -> None:
    tokens = _tokens(text)
    kinds = {getattr(token, "type", "") for token in tokens}
    assert not kinds & {"link_open", "image", "html_block"}
    html = [getattr(t, "content", "") for t in tokens if getattr(t, "type", "") == "html_inline"]
    assert set(html) <= {"<sub>", "</sub>"}  # the footer's, nothing from a name
    texts = " ".join(getattr(t, "content", "") for t in tokens if getattr(t, "type", "") == "text")
    assert name_part in texts
    # what GitHub links in plain text: mentions, issue numbers, URLs, www. names
    assert re.findall(r"@\w|#\d|://|www\.", texts) == []
    _no_raw(texts)


def test_markdown_of_a_name_is_literal_text() -> None:
    _assert_inert_markdown(f"| a |\n|---|\n| {markdown(HOSTILE)} |\n\n- {markdown(HOSTILE)}\n")
    assert markdown("a|b") == "a\\|b"


# --------------------------------------------------------------------------- analyze


@pytest.mark.parametrize("fmt", ["text", "markdown", "junit", "github", "json"])
def test_a_hostile_plan_name_reaches_no_reader_raw(tmp_path: Path, fmt: str) -> None:
    config = _hostile_config(tmp_path)
    result = CliRunner().invoke(
        cli, ["analyze", FIXTURE, "--config", str(config), "--format", fmt, "--min-runs", "9"]
    )
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert HOSTILE.split("\n")[0] in out
    for stream in (out, result.stderr):
        _no_raw(stream)
    assert COMMAND_LINE.findall(result.stderr) == []
    if fmt == "github":  # its commands, one per line; the name never starts one
        assert all(line.startswith(("::", "overlap-check")) for line in out.splitlines())
        assert "\n::error::pwned" not in out and "%0A::error" not in out
    else:
        assert COMMAND_LINE.findall(out) == []
    if fmt == "json":
        assert json.loads(out)["plans"][0]["name"] == HOSTILE  # exact, escapes undone
    if fmt == "markdown":
        _assert_inert_markdown(out)
    if fmt == "junit":
        root = ET.fromstring(out.split("\n", 1)[1])
        jenkins = xmlschema.XMLSchema(JUNIT_SCHEMAS / "jenkins-xunit-junit-10.xsd")
        surefire = xmlschema.XMLSchema(JUNIT_SCHEMAS / "surefire-test-report-3.0.xsd")
        assert list(jenkins.iter_errors(root)) == []
        assert [e for s in root.findall("testsuite") for e in surefire.iter_errors(s)] == []
        path = tmp_path / "report.xml"
        path.write_text(out, encoding="utf-8")
        _, outcome = xunitparser.parse(str(path))
        assert outcome.testsRun >= 1 and len(outcome.failures) >= 1


def test_the_step_summary_escapes_names_too(tmp_path: Path) -> None:
    config = _hostile_config(tmp_path)
    summary = tmp_path / "summary.md"
    result = CliRunner(env={"GITHUB_STEP_SUMMARY": str(summary)}).invoke(
        cli, ["analyze", FIXTURE, "--config", str(config), "--format", "json"]
    )
    assert result.exit_code == 1
    _assert_inert_markdown(summary.read_text(encoding="utf-8"))


def test_an_error_naming_a_hostile_path_is_one_escaped_line(tmp_path: Path) -> None:
    name = str(tmp_path / "base\n::error::pwned\x1b[2J.json")
    result = CliRunner().invoke(cli, ["analyze", FIXTURE, "--baseline", name])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1
    assert "base\\n::error::pwned\\x1b[2J.json" in result.stderr
    _no_raw(result.stderr)
    folder = tmp_path / "out\n::error::pwned"
    folder.mkdir()  # click's own usage error names it
    usage = CliRunner().invoke(cli, ["lint", str(ROOT / "tests"), "--output", str(folder)])
    assert usage.exit_code == 2 and "out\\n::error::pwned" in usage.stderr
    assert COMMAND_LINE.findall(usage.stderr) == []


def test_annotation_paths_are_relative_to_the_workspace_wherever_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    config = _hostile_config(tmp_path)
    config.write_text(config.read_text().replace(json.dumps(HOSTILE), '"moe"'))
    below = tmp_path / "jobs" / "gate"
    below.mkdir(parents=True)
    monkeypatch.chdir(below)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    args = ["analyze", FIXTURE, "--config", "../../overlap-check.toml", "--format", "github"]
    out = CliRunner().invoke(cli, args).stdout
    assert "file=overlap-check.toml,line=1," in out  # from the repository root
    workspace = CliRunner(env={"GITHUB_WORKSPACE": str(tmp_path / "jobs")}).invoke(cli, args)
    assert "file=../" not in workspace.stdout  # outside the workspace: the root's path
    inner = CliRunner(env={"GITHUB_WORKSPACE": str(tmp_path)}).invoke(cli, args)
    assert "file=overlap-check.toml,line=1," in inner.stdout
    # lint: annotations and SARIF alike, for a file named by its absolute path
    model = tmp_path / "src" / "model.py"
    model.parent.mkdir()
    model.write_text((ROOT / "tests" / "data" / "lint" / "pipeline_npugraph_ex.py").read_text())
    lint = CliRunner().invoke(cli, ["lint", str(model), "--format", "github"])
    assert lint.stdout.startswith("::error file=src/model.py,line=")
    sarif = json.loads(CliRunner().invoke(cli, ["lint", str(model), "--format", "sarif"]).stdout)
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "src/model.py"


# --------------------------------------------------------------------------- JUnit


def test_junit_of_nothing_to_judge_has_one_passing_testcase(tmp_path: Path) -> None:
    report = Report("0.1.0", "pass", 0, Thresholds(), (), notes=("a", "b"),
                    evidence_summary=("x", "y"))  # fmt: skip
    text = junit.render(report)
    root = ET.fromstring(text.split("\n", 1)[1])
    jenkins = xmlschema.XMLSchema(JUNIT_SCHEMAS / "jenkins-xunit-junit-10.xsd")
    surefire = xmlschema.XMLSchema(JUNIT_SCHEMAS / "surefire-test-report-3.0.xsd")
    assert list(jenkins.iter_errors(root)) == []
    assert [e for s in root.findall("testsuite") for e in surefire.iter_errors(s)] == []
    assert root.get("tests") == "1" and len(list(root.iter("testcase"))) == 1
    names = [p.get("name") for p in root.iter("property")]
    assert len(names) == len(set(names)) and {"note.1", "note.2", "evidence.2"} <= set(names)
    path = tmp_path / "empty.xml"
    path.write_text(text, encoding="utf-8")
    _, outcome = xunitparser.parse(str(path))  # asserts unique property names itself
    assert outcome.testsRun == 1 and outcome.wasSuccessful()


# --------------------------------------------------------------------------- lint


@pytest.mark.parametrize("fmt", ["text", "github", "junit", "json", "sarif"])
def test_a_hostile_lint_file_name_reaches_no_reader_raw(tmp_path: Path, fmt: str) -> None:
    source = (ROOT / "tests" / "data" / "lint" / "moe_ge").glob("*.py")
    bad = tmp_path / "m\n::error::pwned\x1b[31m\u202e.py"
    bad.write_text("\n".join(path.read_text(encoding="utf-8") for path in source))
    result = CliRunner().invoke(cli, ["lint", str(tmp_path), "--format", fmt])
    assert result.exit_code == 1, result.output
    _no_raw(result.stdout)
    if fmt == "github":
        assert all(line.startswith("::error ") for line in result.stdout.splitlines())
    else:
        assert COMMAND_LINE.findall(result.stdout) == []
    if fmt == "json":
        assert str(bad) in [f["path"] for f in json.loads(result.stdout)["findings"]]
