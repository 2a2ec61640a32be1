"""GE aicore_num strings, graph dumps, matching dump operators to kernels, overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from overlap_check.judge.pipeline import analyze_captures
from overlap_check.model import Capture, CoresResult, DeviceConfig, DeviceCores, Options
from overlap_check.model.errors import ConfigError, InputError
from overlap_check.model.table import conform
from overlap_check.readers.graph_dump import (
    GraphDumpLimits,
    operator_limits_for,
    parse_aicore_num,
    parse_text_proto,
    read_graph_dump,
)

# --------------------------------------------------------------------------- aicore_num


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("24|48", (24, 48)),
        (" 20 | 40 ", (20, 40)),
        ('"24|48"', (24, 48)),
        ('config.ge_config.aicore_num = "24|48"', (24, 48)),
        ("aicore_num='12|24'", (12, 24)),
        ("10|", (10, None)),  # chips without separate vector cores (ATC docs)
        ("10", (10, None)),
    ],
)
def test_aicore_num_strings(text: str, expected: tuple[int, int | None]) -> None:
    assert parse_aicore_num(text) == expected


@pytest.mark.parametrize("text", ["24,48", "24;48", "24|48|1", "a|b", "0|48", "24|0", "", "|48"])
def test_malformed_aicore_num_names_the_key(text: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_aicore_num(text)
    assert err.value.key == "device.ge_aicore_num"
    assert err.value.exit_code == 2
    assert "'device.ge_aicore_num'" in str(err.value)


def cores_of(captures: list[Capture], options: Options) -> CoresResult:
    """The core findings of analysing these runs (the public path)."""
    found = analyze_captures(captures, options).cores
    assert found is not None
    return found


def test_aicore_num_error_hint_shows_the_right_form() -> None:
    with pytest.raises(ConfigError) as err:
        parse_aicore_num("24,48", key="ge_config.aicore_num", path="overlap-check.toml")
    assert str(err.value).startswith("overlap-check.toml: ")
    assert "'ge_config.aicore_num'" in str(err.value) and '"24|48"' in str(err.value)


def test_analysis_rejects_a_bad_global_string() -> None:
    kernels = conform(pl.DataFrame({"name": ["A"], "stream_id": [2], "start_ns": [0]}))
    cap = Capture("p", "x", 0, 0, None, None, kernels, device_cores=DeviceCores(24, 48, "config"))
    with pytest.raises(ConfigError) as err:
        cores_of(
            [cap],
            Options(device=DeviceConfig(ge_aicore_num="24,48")),
        )
    assert err.value.key == "device.ge_aicore_num"


# --------------------------------------------------------------------------- text protobuf

DUMP = """\
name: "dynamo_graph"
graph {
  name: "graph_1"
  op {
    name: "SharedExpert_MatMul"
    type: "MatMulV2"
    attr { key: "_op_aicore_num" value { s: "12" } }
    attr { key: "_op_vectorcore_num" value { s: "24" } }
    attr { key: "_user_stream_label" value { s: "1" } }
    input_desc { name: "x1" dtype: DT_BF16 shape { dim: 16 dim: 7168 } }
  }
  op {
    name: "Add_1"  # a comment
    type: "Add"
    attr { key: "_op_aicore_num" value { s: "30" } }
  }
  op { name: "Cast" type: "Cast" attr { key: "dst_type" value { i: 27 } } }
}
"""


def test_text_proto_parses_nested_messages_and_escapes() -> None:
    tree = parse_text_proto('a: "x\\"y" b { c: 1 d: [1, 2] e < f: DT_BF16 > }', path="t")
    assert tree == [
        ("a", 'x"y'),
        ("b", [("c", "1"), ("d", "1"), ("d", "2"), ("e", [("f", "DT_BF16")])]),
    ]


def test_graph_dump_file(tmp_path: Path) -> None:
    path = tmp_path / "dynamo_optimized_graph_1_rank_0_pid_77_ts_100.txt"
    path.write_text(DUMP, encoding="utf-8")
    dump = read_graph_dump(path)
    assert dump.files == (str(path),)
    rows = sorted(dump.table.select("op_name", "op_type", "rank", "aicore", "vectorcore").rows())
    assert rows == [("Add_1", "Add", 0, 30, None), ("SharedExpert_MatMul", "MatMulV2", 0, 12, 24)]


def test_graph_dump_folder_optimized_beats_original(tmp_path: Path) -> None:
    original = DUMP.replace('s: "12"', 's: "8"')
    (tmp_path / "dynamo_original_graph_1_rank_0_pid_77_ts_200.txt").write_text(original)
    (tmp_path / "dynamo_optimized_graph_1_rank_0_pid_77_ts_100.pbtxt").write_text(DUMP)
    (tmp_path / "dynamo_optimized_graph_1_rank_0_pid_77_ts_100.py").write_text("not a dump {")
    (tmp_path / "notes.txt").write_text("not a dump either {")
    dump = read_graph_dump(tmp_path)
    assert len(dump.files) == 2
    table = dump.table.filter(pl.col("op_name") == "SharedExpert_MatMul")
    assert table.get_column("aicore").to_list() == [12]
    assert any("different limits" in n and "SharedExpert_MatMul" in n for n in dump.notes)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('op {\n  name: "A"\n  attr { key: "x"\n', 3, "unclosed"),
        ('op {\n  name: "A" }\n}\n', 3, "unexpected"),
        ('op {\n  name: "A\n}\n', 2, "unexpected character"),
    ],
)
def test_malformed_dump_names_file_and_line(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    path = tmp_path / "g.pbtxt"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_graph_dump(path)
    assert (err.value.path, err.value.line) == (str(path), line)
    assert words in str(err.value)


def test_non_numeric_limit_attr_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "g.pbtxt"
    path.write_text('op { name: "A" attr { key: "_op_aicore_num" value { s: "many" } } }')
    with pytest.raises(InputError) as err:
        read_graph_dump(path)
    assert "'A'" in str(err.value) and err.value.path == str(path)


def test_folder_without_dumps_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        read_graph_dump(tmp_path)
    with pytest.raises(InputError):
        read_graph_dump(tmp_path / "missing")


# --------------------------------------------------------------------------- matching


def limits_table(rows: list[tuple[str, int | None, int | None, int | None]]) -> GraphDumpLimits:
    frame = pl.DataFrame(
        [(n, None, r, a, v) for n, r, a, v in rows],
        schema={"op_name": pl.String, "op_type": pl.String, "rank": pl.Int32,
                "aicore": pl.Int64, "vectorcore": pl.Int64},
        orient="row",
    )  # fmt: skip
    return GraphDumpLimits(table=frame, files=("dump",))


def test_kernels_match_operators_exactly_or_by_contained_name() -> None:
    kernels = conform(
        pl.DataFrame(
            {
                "rank": [0, 0, 0, 0, 1],
                "name": ["Add_1", "Add_12", "aclnnMatmul_SharedExpert_MatMul_0", "Mul", "Add_1"],
                "stream_id": [2, 2, 3, 2, 2],
                "start_ns": [1, 2, 3, 4, 5],
            }
        )
    )
    dump = limits_table(
        [
            ("Add_1", None, 30, None),
            ("SharedExpert_MatMul", None, 12, 24),
            ("Add_12", 1, 8, None),  # rank 1 only: rank 0's Add_12 has no limit
        ]
    )
    got = operator_limits_for(kernels, dump).sort("start_ns")
    assert got.select("name", "rank", "op_name", "op_aicore", "op_vectorcore").rows() == [
        ("Add_1", 0, "Add_1", 30, None),
        # "Add_1" is not inside "Add_12" at a word boundary; Add_12 exists for rank 1 only
        ("Add_12", 0, None, None, None),
        ("aclnnMatmul_SharedExpert_MatMul_0", 0, "SharedExpert_MatMul", 12, 24),
        ("Mul", 0, None, None, None),
        ("Add_1", 1, "Add_1", 30, None),
    ]


# --------------------------------------------------------------------------- override


def k(name: str, stream: int, start: int, core: str, block: int, mix: int = 0) -> dict[str, Any]:
    return {"rank": 0, "name": name, "stream_id": stream, "start_ns": start, "end_ns": start + 5,
            "accelerator_core": core, "block_num": block, "mix_block_num": mix,
            "is_communication": False}  # fmt: skip


def test_graph_dump_operator_limit_overrides_the_global_one(tmp_path: Path) -> None:
    path = tmp_path / "dynamo_optimized_graph_1_rank_0_pid_77_ts_100.txt"
    path.write_text(DUMP)
    rows = [
        k("SharedExpert_MatMul", 3, 0, "AI_CORE", 16),  # dump says 12 (tighter than 24): violation
        k("OtherMatMul", 2, 10, "AI_CORE", 16),  # global 24: fine
        k("Add_1", 2, 20, "AI_CORE", 28),  # dump says 30 (looser than 24): fine
        k("Mul", 2, 30, "AI_CORE", 28),  # global 24: violation
        k("SharedExpert_MatMul", 3, 40, "MIX_AIC", 12, 30),  # mix 30 > dump aiv 24
    ]
    cap = Capture("p", "x", 0, 0, "Level1", None, conform(pl.DataFrame(rows)),
                  device_cores=DeviceCores(24, 48, "info.json"))  # fmt: skip
    options = Options(device=DeviceConfig(ge_aicore_num="24|48"), graph_dump=str(path))
    result = cores_of([cap], options)
    got = sorted((v.name, v.kind, v.limit, v.limit_source) for v in result.violations)
    assert got == [
        ("Mul", "aicore", 24, "ge-global"),
        ("SharedExpert_MatMul", "aicore", 12, "graph-dump"),
        ("SharedExpert_MatMul", "vectorcore", 24, "graph-dump"),
    ]
    sources = {a.source: a.kernels for a in result.limits}
    # dump: both SharedExpert_MatMul rows (aic and aiv) and Add_1 (aic only);
    # global: OtherMatMul, Mul, and Add_1's aiv (the dump gives Add_1 no vectorcore)
    assert sources == {"graph-dump": 3, "ge-global": 3}
