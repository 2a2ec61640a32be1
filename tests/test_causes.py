"""Issue 16's measured 3c causes on the generated fixtures: tail operators after the join,
the join wait's fix steps, and Input Shapes that changed against the reference.

The figures follow from the construction (synth.gain_scenarios): tail-ops lays a
TransData of 12.4 µs and a MemSet of 3.2 µs on the main stream after each join;
shapes-multi-stream's GroupedMatmul has Input Shapes 4096,7168;8,7168,4096;;;;;;8 where
its reference, shapes-single-stream, has the default 2048,7168;8,7168,4096;;;;;;8.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema  # the dev extra
import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.judge.advice import fix_steps
from overlap_check.judge.pipeline import check
from overlap_check.measure.shapes import shape_changes
from overlap_check.model import Evidence, Options, Plan, Report, ShapeCount
from overlap_check.readers.capture import read_capture
from overlap_check.readers.discover import discover
from overlap_check.report.json import render

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
TAIL = FIXTURES / "tail-ops"
MULTI = FIXTURES / "shapes-multi-stream"
SINGLE = FIXTURES / "shapes-single-stream"
PLAN_ARGS = ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]
WIDE = "4096,7168;8,7168,4096;;;;;;8"
NARROW = "2048,7168;8,7168,4096;;;;;;8"
PATHS = ("ge", "npugraph_ex", "eager")


def analyze_json(*args: str | Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["analyze", *map(str, args), "-q", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _evidence(data: dict[str, Any], kind: str) -> dict[str, Any]:
    (found,) = [e for e in data["plans"][0]["diagnosed"]["evidence"] if e["kind"] == kind]
    return found


def test_tail_operators_named_with_count_and_time_per_layer() -> None:
    data = analyze_json(TAIL, *PLAN_ARGS)
    plan = data["plans"][0]
    assert plan["verdict"] == "real"
    # one TransData and one MemSet per layer, unjittered: 12.4 and 3.2 µs, most time first
    assert plan["walls"]["tail_ops"] == [
        {"name": "TransData", "count": 1, "us": 12.4},
        {"name": "MemSet", "count": 1, "us": 3.2},
    ]
    tail = _evidence(data, "tail-ops")
    assert tail["size_us"] == pytest.approx(12.4 + 3.2)
    assert tail["text"] == (
        "tail operators after the join on the main stream, per layer (warm median): "
        "TransData x1 (12.400 µs), MemSet x1 (3.200 µs); 15.600 µs of format/layout/fill "
        "work between the dominator and the next main op"
    )
    # ordered by size with the other causes: contention (larger) first, the cube last
    kinds = [e["kind"] for e in plan["diagnosed"]["evidence"]]
    assert kinds == ["contention", "tail-ops", "cube-saturated"]
    assert (
        "tail ops TransData, MemSet 15.600 µs per layer after the join"
        in (data["evidence_summary"][0])
    )


def test_tail_operators_in_the_text_walls_line() -> None:
    result = CliRunner().invoke(cli, ["analyze", str(TAIL), *PLAN_ARGS, "-q"])
    assert "; tail ops TransData x1 12.400 µs, MemSet x1 3.200 µs; step wall" in result.stdout


def test_no_tail_operators_without_them() -> None:
    data = analyze_json(FIXTURES / "real-dual-stream", *PLAN_ARGS)
    assert data["plans"][0]["walls"]["tail_ops"] == []
    kinds = {e["kind"] for e in data["plans"][0]["diagnosed"]["evidence"]}
    assert "tail-ops" not in kinds and "join-wait" not in kinds


@pytest.mark.parametrize("kind", ["tail-ops", "join-wait", "shape-change"])
def test_each_new_cause_has_steps_of_its_own_for_every_path(kind: str) -> None:
    cause = [Evidence(kind, "measured", 1000)]  # type: ignore[arg-type]
    plain = {path: set(fix_steps("real", path)) for path in PATHS}
    added = {path: set(fix_steps("real", path, cause)) - plain[path] for path in PATHS}
    assert all(len(steps) == 1 for steps in added.values())
    assert len({next(iter(steps)) for steps in added.values()}) == 3  # one per path
    generic = set(fix_steps("real", None, cause)) - set(fix_steps("real", None))
    assert len(generic) == 1


def test_join_wait_fix_names_the_apis_of_the_path() -> None:
    data = analyze_json(FIXTURES / "join-wait", *PLAN_ARGS, "--path", "npugraph_ex")
    fix = data["plans"][0]["diagnosed"]["fix"]
    assert any("wait_stream(side)" in step and "side tail" in step for step in fix)
    ge = analyze_json(FIXTURES / "join-wait", *PLAN_ARGS, "--path", "ge")
    assert any(
        "npu_wait_tensor" in s and "side tail" in s for s in ge["plans"][0]["diagnosed"]["fix"]
    )


@pytest.fixture(scope="module")
def changed() -> dict[str, Any]:
    return analyze_json(MULTI, "--reference", SINGLE, *PLAN_ARGS)


def test_shape_change_against_the_reference(changed: dict[str, Any]) -> None:
    (delta,) = changed["reference"]["plans"]
    sentence = f"GroupedMatmul (dominator) input shapes differ: {WIDE} vs {NARROW} in the reference"
    assert delta["shapes_available"] is True
    assert delta["shape_changes"] == [sentence]
    cause = _evidence(changed, "shape-change")
    assert cause["text"] == f"{sentence}: the gain against the reference is not like-for-like"
    assert cause["size_us"] is None  # not a time: after the timed causes
    assert [e["kind"] for e in changed["plans"][0]["diagnosed"]["evidence"]][-1] == "shape-change"
    assert "(not like-for-like: input shapes differ)" in changed["evidence_summary"][0]
    assert any("not like-for-like: " + sentence in note for note in changed["notes"])


def test_shape_change_report_matches_the_schema_and_reads_back(changed: dict[str, Any]) -> None:
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(changed)
    text = json.dumps(changed, indent=2, ensure_ascii=False) + "\n"
    assert render(Report.from_json(changed, "report.json")) == text


def test_same_shapes_say_nothing() -> None:
    # slower-multi-stream and its reference ran the default shapes on both sides
    data = analyze_json(
        FIXTURES / "slower-multi-stream",
        "--reference",
        FIXTURES / "slower-single-stream",
        *PLAN_ARGS,
    )
    (delta,) = data["reference"]["plans"]
    assert (delta["shapes_available"], delta["shape_changes"]) == (True, [])
    assert "like-for-like" not in data["evidence_summary"][0]


def test_shapes_read_only_when_asked() -> None:
    source = discover(MULTI)[0]
    assert "input_shapes" not in read_capture(source).kernels.columns
    shaped = read_capture(source, shapes=True).kernels
    dominators = shaped.filter(shaped["name"].str.contains("GroupedMatmul"))
    assert set(dominators["input_shapes"].to_list()) == {WIDE}  # the CSV's quotes removed


def test_shapes_not_available_for_captures_without_the_column() -> None:
    # captures given in memory, read without Input Shapes: the comparison says so
    captures = [read_capture(s) for s in discover(MULTI)]
    plan = Plan("SharedExpert", side="SharedExpert", dominator="GroupedMatmul")
    report = check(captures, Options(plans=(plan,), reference=str(SINGLE)))
    assert report.reference is not None
    (delta,) = report.reference.plans
    assert (delta.shapes_available, delta.shape_changes) == (False, ())
    assert "input shapes not available" in report.reference.matched


def test_shape_changes_compare_distinct_shapes_per_operator() -> None:
    head = (
        ShapeCount("dominator", "GroupedMatmul", "4096,7168", 8),
        ShapeCount("side", "MatMulV3", "8192,7168", 4),
        ShapeCount("side", "MatMulV3", "16,7168", 4),
        ShapeCount("side", "SwiGlu", "8192,4096", 8),
    )
    reference = (
        ShapeCount("dominator", "GroupedMatmul", "4096,7168", 8),
        ShapeCount("side", "MatMulV3", "8192,7168", 8),
        ShapeCount("side", "SwiGlu", "8192,4096", 8),
    )
    assert shape_changes(head, reference) == (
        "MatMulV3 (side) input shapes differ: 16,7168 | 8192,7168 vs 8192,7168 in the reference",
    )
    assert shape_changes(reference, reference) == ()
    assert shape_changes(None, reference) is None
