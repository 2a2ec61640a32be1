"""Input Shapes from the .db export (COMPUTE_TASK_INFO.inputShapes, an id into STRING_IDS).

The shapes pair of issue 16 (synth.gain_scenarios) written as .db files: the
multi-stream capture's GroupedMatmul ran on 4096 tokens (4096,7168;8,7168,4096;;;;;;8),
its single-stream reference on the default 2048 (2048,7168;8,7168,4096;;;;;;8); every
other operator has its type's default shapes (synth.kernel_csv), in the .db as in
kernel_details.csv. The .db stores the text without the CSV's quotes; both readers give
the same normalised value, so the comparison is the same as on the CSV fixtures.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from overlap_check.cli import cli
from overlap_check.measure.shapes import shape_signature
from overlap_check.model import Plan
from overlap_check.readers import db as db_reader
from overlap_check.readers.capture import read_capture
from overlap_check.readers.discover import discover
from overlap_check.readers.kernel_csv import input_shapes_text
from synth import gain_scenarios as gain
from synth.fixtures import LAYERS
from synth.model import Variant

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
PLAN_ARGS = ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]
PLAN = Plan("SharedExpert", side="SharedExpert", dominator="GroupedMatmul")
WIDE = "4096,7168;8,7168,4096;;;;;;8"
NARROW = "2048,7168;8,7168,4096;;;;;;8"
CHANGE = f"GroupedMatmul (dominator) input shapes differ: {WIDE} vs {NARROW} in the reference"
DB_ONLY = Variant(crlf=False, kernel_details=False, db=True, trace=False)
LEVEL0_DB = Path("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT")


@pytest.fixture(scope="module")
def db_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """shapes-multi-stream and shapes-single-stream as the fixtures build them, .db only."""
    root = tmp_path_factory.mktemp("db-shapes")
    multi, single = root / "multi", root / "single"
    gain.shapes_multi_stream(layers=LAYERS).write(multi, DB_ONLY)
    gain.shapes_single_stream(layers=LAYERS).write(single, DB_ONLY)
    return multi, single


def analyze_json(*args: str | Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["analyze", *map(str, args), "-q", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_shapes_text_normalised_like_the_csv() -> None:
    raw = pl.Series(
        "input_shapes", ['"8192,7168;7168"', "8192,7168;7168", "N/A", "", '""', None, "8192,256;"]
    )
    got = pl.DataFrame([raw]).select(input_shapes_text())["input_shapes"]
    # the CSV's quoted text and the .db's bare text are one value; N/A, blank, "" none
    assert got.to_list() == [
        "8192,7168;7168",
        "8192,7168;7168",
        None,
        None,
        None,
        None,
        "8192,256;",
    ]


def test_db_shapes_read_only_when_asked(db_pair: tuple[Path, Path]) -> None:
    multi, _ = db_pair
    source = discover(multi)[0]
    plain = read_capture(source)
    assert plain.source == "db"
    assert "input_shapes" not in plain.kernels.columns
    shaped = read_capture(source, shapes=True).kernels
    dominators = shaped.filter(shaped["name"].str.contains("GroupedMatmul"))
    assert set(dominators["input_shapes"].to_list()) == {WIDE}  # no quotes in the .db
    # the same value the CSV reader gives for the same shapes (fixtures/shapes-multi-stream)
    csv = read_capture(discover(FIXTURES / "shapes-multi-stream")[0], shapes=True).kernels
    csv_dominators = csv.filter(csv["name"].str.contains("GroupedMatmul"))
    assert set(csv_dominators["input_shapes"].to_list()) == {WIDE}


def test_db_pair_gives_the_csv_fixtures_shape_changes(db_pair: tuple[Path, Path]) -> None:
    multi, single = db_pair
    from_db = analyze_json(multi, "--reference", single, *PLAN_ARGS)
    from_csv = analyze_json(
        FIXTURES / "shapes-multi-stream",
        "--reference",
        FIXTURES / "shapes-single-stream",
        *PLAN_ARGS,
    )
    assert from_db["runs"][0]["source"] == "db"
    (delta,) = from_db["reference"]["plans"]
    assert (delta["shapes_available"], delta["shape_changes"]) == (True, [CHANGE])
    (csv_delta,) = from_csv["reference"]["plans"]
    assert csv_delta["shape_changes"] == delta["shape_changes"]
    # 5 runs, 2 cold: 3 warm runs x 2 layers = 6 GroupedMatmul and SwiGlu, 12 MatMulV3
    # (two per layer: the shared expert's up and down projections)
    warm = 3 * LAYERS
    assert from_db["plans"][0]["input_shapes"] == [
        {"role": "dominator", "label": "GroupedMatmul", "shapes": WIDE, "count": warm},
        {"role": "side", "label": "MatMulV3", "shapes": "8192,7168;7168,2048", "count": 2 * warm},
        {"role": "side", "label": "SwiGlu", "shapes": "8192,4096", "count": warm},
    ]
    assert from_db["plans"][0]["input_shapes"] == from_csv["plans"][0]["input_shapes"]


def test_db_capture_against_a_csv_reference(db_pair: tuple[Path, Path]) -> None:
    # a .db capture and a kernel_details reference compare alike: one normalised value
    multi, _ = db_pair
    data = analyze_json(multi, "--reference", FIXTURES / "shapes-single-stream", *PLAN_ARGS)
    (delta,) = data["reference"]["plans"]
    assert delta["shape_changes"] == [CHANGE]


def test_db_shapes_bulk_path_matches_rows(db_pair: tuple[Path, Path]) -> None:
    path = min(db_pair[0].glob("*/ASCEND_PROFILER_OUTPUT/*.db"))
    bulk = db_reader.read_db(path, shapes=True).kernels
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(db_reader, "_bulk_compute", lambda *args: None)
        rows = db_reader.read_db(path, shapes=True).kernels
    assert_frame_equal(bulk, rows)
    # every kernel has its shapes; copy and communication rows (not kernels) none
    kernel = ~pl.col("is_copy") & ~pl.col("is_communication")
    assert bulk.filter(kernel)["input_shapes"].null_count() == 0
    assert bulk.filter(~kernel)["input_shapes"].null_count() == bulk.filter(~kernel).height


def test_db_without_the_column_has_no_shapes(db_pair: tuple[Path, Path], tmp_path: Path) -> None:
    original = min(db_pair[0].glob("*/ASCEND_PROFILER_OUTPUT/*.db"))
    path = tmp_path / "old.db"
    path.write_bytes(original.read_bytes())
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE COMPUTE_TASK_INFO DROP COLUMN inputShapes")
    con.commit()
    con.close()
    # like a kernel CSV without Input Shapes: no column, so no signature ("not available")
    kernels = db_reader.read_db(path, shapes=True).kernels
    assert "input_shapes" not in kernels.columns
    assert shape_signature(kernels, PLAN) is None


def test_level0_db_fixture_has_no_shapes() -> None:
    # fixtures/db-level0: inputShapes N/A for every kernel, as the real Level0 export
    capture = read_capture(discover(FIXTURES / "db-level0")[0], shapes=True)
    shapes = capture.kernels["input_shapes"]
    assert shapes.null_count() == shapes.len() > 0
    assert shape_signature(capture.kernels, PLAN) is None


def test_real_level0_db_reports_shapes_not_available(real_profiles: Path) -> None:
    root = real_profiles / "torch_npu-level0-db"
    con = sqlite3.connect(root / LEVEL0_DB / "ascend_pytorch_profiler_0.db")
    try:
        stored = con.execute(
            "SELECT s.value, count(*) FROM COMPUTE_TASK_INFO c "
            "JOIN STRING_IDS s ON s.id = c.inputShapes GROUP BY s.value"
        ).fetchall()
    finally:
        con.close()
    assert stored == [("N/A", 187)]  # every kernel: Level0 records no shapes
    kernels = read_capture(discover(root)[0], shapes=True).kernels
    compute = kernels.filter(~pl.col("is_communication") & ~pl.col("is_copy"))
    assert compute.height == 187 and compute["input_shapes"].null_count() == 187
    # the capture against itself: the dropout mask kernels on stream 3 beside the MatMulV2
    data = analyze_json(
        root, "--reference", root, "--side", "DSAGenBitMask", "--dominator", "MatMulV2"
    )
    (delta,) = data["reference"]["plans"]
    assert (delta["shapes_available"], delta["shape_changes"]) == (False, [])
    assert "input shapes not available" in data["reference"]["matched"]
    assert data["plans"][0].get("input_shapes") is None
