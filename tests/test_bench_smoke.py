"""The benchmark harness works: its pieces on hand-made data, and a toy run.

No timing is asserted: performance figures belong in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import inputs, report  # noqa: E402
from bench.cases import needed_bytes  # noqa: E402
from bench.peers import naive_pandas  # noqa: E402
from bench.peers.kineto import write_kineto_trace  # noqa: E402

BASE = 1_736_408_883_704_643_212  # a 19-digit epoch ns, as in real captures


def _kernels(rows: list[tuple[int, int, int]]) -> pl.DataFrame:
    """(stream, start offset ns, duration ns) -> a synth-like kernel frame."""
    return pl.DataFrame(
        {
            "start_ns": [BASE + start for _, start, _ in rows],
            "dur_ns": [dur for _, _, dur in rows],
            "name": ["aclnnAdd_AddAiCore_Add"] * len(rows),
            "stream_id": [sid for sid, _, _ in rows],
        },
        schema={
            "start_ns": pl.Int64,
            "dur_ns": pl.Int64,
            "name": pl.String,
            "stream_id": pl.Int64,
        },
    )


def test_exact_figures_by_hand() -> None:
    # stream 2: [0, 100) and [50, 150) merge into [0, 150); stream 3: [120, 200) and [300, 310)
    frame = _kernels([(2, 0, 100), (2, 50, 100), (3, 120, 80), (3, 300, 10)])
    facts = inputs.exact_figures(frame)
    assert facts["busy_ns"] == {"2": 150 - 0, "3": (200 - 120) + (310 - 300)}
    assert facts["main"] == 2 and facts["side"] == 3
    assert facts["overlap_ns"] == 150 - 120
    assert facts["avg_name_bytes"] == len("aclnnAdd_AddAiCore_Add")


def test_needed_bytes_formula() -> None:
    assert needed_bytes(1_000, 30.0) == 1_000 * (8 + 8 + 8 + 30.0)


def test_kineto_trace_is_exact_decimal_text(tmp_path: Path) -> None:
    frame = _kernels([(2, 0, 1_234), (3, 999, 10)])
    path = write_kineto_trace(frame, tmp_path / "rank0.json")
    text = path.read_text()
    assert '"ts": 1736408883704643.212' in text  # BASE ns as µs text, no float rounding
    assert '"dur": 1.234' in text
    trace = json.loads(text)
    assert trace["distributedInfo"]["rank"] == 0
    events = trace["traceEvents"]
    assert [e["args"]["stream"] for e in events] == [2, 3]
    assert all(e["cat"] == "kernel" and e["ph"] == "X" for e in events)


def test_naive_pandas_overlap_in_float_us(tmp_path: Path) -> None:
    csv = tmp_path / "kernel_details.csv"
    csv.write_text(
        "Stream ID,Name,Start Time(us),Duration(us)\n"
        "2,A,1000.000\t,10.0\n"  # [1000, 1010) µs, with the real files' trailing tab
        "3,B,1005.000\t,10.0\n"  # [1005, 1015)
        "3,C,1030.000\t,1.0\n"
    )
    result = naive_pandas.analyze(str(csv))
    assert result["busy_us"] == {"2": 10.0, "3": 10.0 + 1.0}
    assert result["overlap_us"] == pytest.approx(1010.0 - 1005.0)


def test_document_keeps_hand_written_head_and_tail(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text(f"# Mine\n\nintro\n\n{report.BEGIN}\nold figures\n{report.END}\n\n## Notes\n")
    report.write_document(doc, f"{report.BEGIN}\nnew figures\n{report.END}\n")
    text = doc.read_text()
    assert text.startswith("# Mine\n\nintro\n")
    assert "new figures" in text and "old figures" not in text
    assert text.rstrip().endswith("## Notes")


def test_tiny_run_writes_every_section(tmp_path: Path) -> None:
    from bench import run

    out = tmp_path / "benchmarks.md"
    code = run.main(
        ["--tiny", "--case", "1", "--case", "7", "--cache", str(tmp_path), "--output", str(out)]
    )
    assert code == 0
    text = out.read_text()
    assert "## 1. Level1 capture, 2,000 kernels" in text
    assert "## 7. Peers" in text
    assert "naive pandas" in text
    assert "stream overlap vs exact | exact |" in text  # overlap-check's figure is exact
