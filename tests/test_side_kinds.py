"""Communication and copy plans (side_kind, issue 15) on their fixtures, through the CLI.

Each answer is written here from the construction in synth/side_kinds.py
(layer windows in µs relative to the layer start), not read from the tool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.cli.config import load_config
from overlap_check.model import Plan
from overlap_check.model.errors import ConfigError
from overlap_check.model.selection import side_expr
from overlap_check.model.table import compute_kernels
from overlap_check.readers import load
from synth.model import Variant
from synth.side_kinds import afd, case, kv_offload

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# hidden_pct per case = median over the occurrences of (side µs under compute on another
# stream) / (side µs), the one capture's only run being its warm median
HAND = {
    # send [100, 320] under attention [0, 300]: 200 of 220 µs
    "afd-hidden": (200 / 220, "real", 3),
    # send [295, 495] under attention [0, 300]: 5 of 200 µs
    "afd-exposed": (5 / 200, "fake", 3),
    # per layer: dispatch [100, 340] under GMM [0, 300] and [320, 340]: 200 + 20 of 240;
    # combine [330, 530] under GMM [320, 620]: 200 of 200; 3 layers: median of 3 x 0.9167
    # and 3 x 1.0
    "micro-batch-hidden": (((200 + 20) / 240 + 200 / 200) / 2, "real", 6),
    # dispatch [300, 520] and combine [820, 1040] while the main stream idles: 0 µs. Layers
    # (docs/hidden-fraction.md): the dispatch touches both GroupedMatmuls (a tie goes to the
    # later, [520, 820]); the combine is 0 µs after that one's end and 60 µs before the next
    # layer's first: both belong to the second GroupedMatmul, one occurrence per layer, 3
    "micro-batch-exposed": (0 / 220, "fake", 3),
    # copies [50, 250] under attention [0, 300] (200) and [500, 600] under MLP [310, 560]
    # (60): 260 of 300 µs
    "kv-offload-hidden": ((200 + 60) / (200 + 100), "real", 3),
    # the copy [300, 500] between attention [0, 300] and MLP [500, 750]: 0 of 200 µs
    "kv-offload-exposed": (0 / 200, "fake", 3),
}


def analyze(*args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["analyze", *args, "--format", "json"])
    out = result.stdout
    report = json.loads(out) if out.strip().startswith("{") else {}
    return result.exit_code, report, result.output


@pytest.mark.parametrize("folder", sorted(HAND))
def test_side_kind_fixture_gets_its_hand_computed_hidden_pct(folder: str) -> None:
    hidden_pct, verdict, judged = HAND[folder]
    answer = case(folder).answer
    assert answer.hidden_pct == pytest.approx(hidden_pct)  # the generator agrees
    code, report, _ = analyze(str(FIXTURES / folder), *answer.cli())
    (plan,) = report["plans"]
    assert plan["name"] == answer.plan
    assert plan["side_kind"] == answer.side_kind
    assert plan["verdict"] == verdict
    assert plan["hidden_pct"] == pytest.approx(hidden_pct, abs=1e-12)
    assert plan["verdict_counts"][verdict] == judged
    assert code == (0 if verdict == "real" else 1)  # --fail-on fake, the default


def test_communication_plan_occurrences_carry_the_hidden_time() -> None:
    code, report, _ = analyze(str(FIXTURES / "afd-hidden"), *case("afd-hidden").answer.cli())
    (run,) = report["plans"][0]["per_run"]
    assert run["judged"] == 3
    # the worst occurrences: each 220 µs of send, 200 µs of it under attention
    for occ in run["worst"]:
        assert occ["side_busy_us"] == 220.0
        assert occ["hidden_us"] == 200.0
    assert code == 0


def test_pipelined_communication_is_no_join_wait_and_no_race() -> None:
    # micro-batch-hidden, layer 1: the dispatch [100, 340] ends under the next micro-batch's
    # GroupedMatmul [320, 620]; the main stream is busy then and never waits for it. Before:
    # "did not wait" in its layer row (a race is judged on compute plans only) and a 100 µs
    # join wait (the idle [300, 320] and [620, 700] up to the first op after 340)
    folder = "micro-batch-hidden"
    code, report, _ = analyze(str(FIXTURES / folder), *case(folder).answer.cli())
    plan = report["plans"][0]
    assert not any(o["join_not_waited"] for r in plan["per_run"] for o in r["layers"])
    walls = plan["walls"]
    assert (walls["join_wait_us"], walls["join_wait_worst_us"]) == (0.0, None)
    assert code == 0


def test_copy_rows_are_read_but_never_compute() -> None:
    (capture,) = load(FIXTURES / "kv-offload-hidden")
    copies = capture.kernels.filter(pl.col("is_copy"))
    # 3 layers x (MEMCPY_ASYNC 200 µs + SDMA 100 µs) on copy stream 5
    assert copies.height == 3 * 2
    assert int((copies["end_ns"] - copies["start_ns"]).sum()) == 3 * (200_000 + 100_000)
    assert copies["stream_id"].unique().to_list() == [5]
    assert compute_kernels(capture.kernels)["stream_id"].unique().to_list() == [2]
    # a compute plan on stream 5 selects nothing; a copy plan selects the copies
    kernels = capture.kernels
    compute_plan = Plan("p", side_stream=5)
    copy_plan = Plan("p", side_stream=5, side_kind="copy")
    assert kernels.filter(side_expr(compute_plan, kernels)).height == 0
    assert kernels.filter(side_expr(copy_plan, kernels)).height == 6
    # the stream-level view is unchanged by the copies: one compute stream
    _code, report, _ = analyze(str(FIXTURES / "kv-offload-hidden"))
    assert [s["stream_id"] for s in report["runs"][0]["streams"]] == [2]


def test_copy_plan_on_kernel_details_only_exits_2_naming_the_capture(tmp_path: Path) -> None:
    built = kv_offload(True)
    built.write(tmp_path, Variant(crlf=False, trace=False))  # Level1 kernel_details.csv only
    (result_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    code, _, output = analyze(str(tmp_path), "--side-stream", "5", "--side-kind", "copy")
    assert code == 2
    assert "lists no copy task and the capture has no trace_view.json, task_time or .db" in output
    assert result_dir.name in output
    assert "side_kind" in output


def test_communication_plan_on_a_side_stream_names_the_kind(tmp_path: Path) -> None:
    # communication rows carry no Stream ID: a side_stream matches none of them
    folder = str(FIXTURES / "afd-hidden")
    code, report, _ = analyze(
        folder, "--side", "hcom_send", "--side-stream", "3", "--side-kind", "communication"
    )
    assert code == 1  # no evidence fails the gate
    (plan,) = report["plans"]
    assert plan["verdict"] == "no-evidence"
    assert (
        "no communication task on stream 3 matched the side regex 'hcom_send'"
        in (plan["diagnosis"])
    )
    # the same regex as a compute plan: communication tasks are not compute kernels
    _code, report, _ = analyze(folder, "--side", "hcom_send")
    assert (
        "no compute kernel matched the side regex 'hcom_send'" in (report["plans"][0]["diagnosis"])
    )


def test_side_kind_in_the_config(tmp_path: Path) -> None:
    path = tmp_path / "overlap-check.toml"
    path.write_text(
        '[[plan]]\nname = "kv"\nside_stream = 5\nside_kind = "copy"\n'
        '[[plan]]\nname = "mm"\nside = "MatMul"\n'
    )
    plans = load_config(str(path), tmp_path).plans
    assert [p.side_kind for p in plans] == ["copy", "compute"]
    path.write_text('[[plan]]\nname = "kv"\nside_stream = 5\nside_kind = "memcpy"\n')
    with pytest.raises(ConfigError) as err:
        load_config(str(path), tmp_path)
    assert err.value.key == "plan[1].side_kind"
    assert "memcpy" in str(err.value)


def test_side_kind_without_a_plan_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        cli, ["analyze", str(FIXTURES / "afd-hidden"), "--side-kind", "copy"]
    )
    assert result.exit_code == 2
    assert "--side-kind" in result.output


@pytest.mark.parametrize("extra", ["trace", "db"])
@pytest.mark.parametrize("hidden", [True, False])
def test_copy_plan_on_a_standard_directory_takes_the_copies_beside_kernel_details(
    tmp_path: Path, hidden: bool, extra: str
) -> None:
    """Issue 23 point 4: a Level1 torch_npu folder with kernel_details.csv (no copy task)
    and trace_view.json (or the .db): the copy plan takes the copies from the other file by
    itself (before: exit 2), the kernels still come from kernel_details.csv."""
    variant = Variant(crlf=False, trace=extra == "trace", db=extra == "db")
    kv_offload(hidden).write(tmp_path, variant)
    code, report, _ = analyze(str(tmp_path), "--side-stream", "5", "--side-kind", "copy")
    (plan,) = report["plans"]
    folder = "kv-offload-hidden" if hidden else "kv-offload-exposed"
    (run,) = report["runs"]
    assert run["source"] == "kernel_details.csv"
    source = "trace_view.json" if extra == "trace" else "db"
    assert any(f"task row(s) from {source}" in note for note in run["notes"])
    # stream 2's kernels exactly as kernel_details.csv has them: 3 layers x 3 kernels,
    # busy (300 + 250 + 40) or (300 + 250 + 40) µs a layer (copies never compute)
    assert [(s["stream_id"], s["kernels"]) for s in run["streams"]] == [(2, 9)]
    assert run["streams"][0]["busy_us"] == pytest.approx(3 * (300 + 250 + 40))
    assert plan["hidden_pct"] == pytest.approx(HAND[folder][0], abs=1e-12)
    assert plan["verdict"] == HAND[folder][1]
    assert code == (0 if hidden else 1)


def test_communication_plan_takes_the_trace_s_ops_when_the_kernel_file_has_none(
    tmp_path: Path,
) -> None:
    """A kernel file without communication rows (HCCL rows cut out of kernel_details.csv)
    beside the trace: the communication plan reads the trace's hcom_send ops by itself
    and gets the hand answer, 200 of 220 µs hidden."""
    afd(True).write(tmp_path, Variant(crlf=False))
    (csv,) = tmp_path.rglob("kernel_details.csv")
    lines = csv.read_text().splitlines()
    kept = [line for line in lines if "hcom_" not in line]
    assert len(kept) < len(lines)
    csv.write_text("\n".join(kept) + "\n")
    code, report, _ = analyze(str(tmp_path), "--side", "hcom_send", "--side-kind", "communication")
    (plan,) = report["plans"]
    assert any("task row(s) from trace_view.json" in n for n in report["runs"][0]["notes"])
    assert plan["hidden_pct"] == pytest.approx(HAND["afd-hidden"][0], abs=1e-12)
    assert code == 0


@pytest.mark.parametrize("hidden", [True, False])
def test_copy_plan_reads_the_copies_from_the_db(tmp_path: Path, hidden: bool) -> None:
    # the same captures written as a .db only: TASK rows typed MEMCPY_ASYNC on stream 5
    kv_offload(hidden).write(
        tmp_path, Variant(crlf=False, kernel_details=False, db=True, trace=False)
    )
    code, report, _ = analyze(str(tmp_path), "--side-stream", "5", "--side-kind", "copy")
    (plan,) = report["plans"]
    folder = "kv-offload-hidden" if hidden else "kv-offload-exposed"
    assert report["runs"][0]["source"] == "db"
    assert plan["hidden_pct"] == pytest.approx(HAND[folder][0], abs=1e-12)
    assert plan["verdict"] == HAND[folder][1]
    assert code == (0 if hidden else 1)
