"""Helper streams (hiding.helper_streams) in the no-plan mode: listed, not judged."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from overlap_check import check, load
from overlap_check.cli import cli

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
REAL = ROOT.parent / "shared" / "real-profiles"


def test_a_stream_of_helper_work_is_listed_not_judged(tmp_path: Path) -> None:
    # helper-stream: stream 2 runs the layer's compute; stream 3 ran only two 3 µs DSA_SQE
    # masks, helper work: no stream pair is judged and the gate has nothing to fail on
    report = check([FIXTURES / "helper-stream"], workers=1)
    assert [r.helper_streams for r in report.ranks] == [(3,)]
    assert report.stream_pairs == ()
    assert report.exit_code == 0
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["analyze", str(FIXTURES / "helper-stream"), "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "rank 0: helper stream(s) 3 (only AI_CPU/DSA_SQE work" in result.output
    assert json.loads(out.read_text())["ranks"][0]["helper_streams"] == [3]


# torch_npu runs its dropout masks (aclnnDropoutGenMaskV2, DSA_SQE) on stream 3 next to
# the single compute stream of these captures (issue 14, item 8)
MASKS_ON_STREAM_3 = ["torch_npu-level0-db", "torch_npu-level0-text", "torch_npu-level1-text"]


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-profiles is absent")
@pytest.mark.parametrize("name", MASKS_ON_STREAM_3)
def test_real_single_stream_captures_name_stream_3_a_helper(name: str) -> None:
    if not (REAL / name).is_dir():
        pytest.skip(f"{name} is absent")
    result = CliRunner().invoke(cli, ["analyze", str(REAL / name)])
    assert result.exit_code == 0, result.output
    assert "rank 0: helper stream(s) 3 " in result.output


@pytest.mark.skipif(not (REAL / "torch_npu-910A-level0").is_dir(), reason="capture absent")
def test_910a_dropout_masks_are_ai_cpu_helpers_not_a_fake_pair() -> None:
    # Level0 kernel_details.csv types every row N/A; the trace types the two
    # StatelessDropOutGenMask tasks on stream 2 AI_CPU (116.671 + 88.351 µs next to
    # stream 1's 9755.754 µs of kernels): helper work, not a stream judged fake
    result = CliRunner().invoke(cli, ["analyze", str(REAL / "torch_npu-910A-level0")])
    assert result.exit_code == 0, result.output
    assert "rank 1: helper stream(s) 2 " in result.output
    (capture,) = load(REAL / "torch_npu-910A-level0")
    masks = capture.kernels.filter(pl.col("stream_id") == 2)
    assert masks.get_column("accelerator_core").to_list() == ["AI_CPU", "AI_CPU"]


@pytest.mark.skipif(not (REAL / "msprof-cli").is_dir(), reason="capture absent")
def test_one_compute_stream_without_a_plan_passes_unless_strict() -> None:
    # msprof CLI: 3 kernels, all on stream 46, no other stream: nothing to pair
    result = CliRunner().invoke(cli, ["analyze", str(REAL / "msprof-cli")])
    assert result.exit_code == 0, result.output
    assert "a single compute stream, 46, and no plan: no stream pair to judge" in result.output
    strict = CliRunner().invoke(cli, ["analyze", "--strict", str(REAL / "msprof-cli")])
    assert strict.exit_code == 1
    assert "only stream 46 ran compute kernels and no plan was given" in strict.output
