"""Hidden fraction, layer-true occurrences, barriers both ways, selection by real names.

Every figure below is ns arithmetic on the intervals the test writes.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from measure_tables import (
    capped_verdict,
    helper_streams,
    lag_pattern,
    layer_occurrences,
    layer_table,
    other_stream_busy,
    stayed_off_side,
)

from overlap_check.measure import barriers, hiding, layering
from overlap_check.measure.placement import stayed_phrases
from overlap_check.model import Thresholds
from overlap_check.model.selection import restricted_side_expr
from overlap_check.model.table import conform

T = Thresholds()


def table(rows: list[tuple[int, str, int, int, str]]) -> pl.DataFrame:
    """(stream, op type, start, end, core) -> a kernel table; name = aclnn<type>_<type>."""
    return conform(
        pl.DataFrame(
            {
                "stream_id": [r[0] for r in rows],
                "name": [f"aclnn{r[1]}_{r[1]}" for r in rows],
                "op_type": [r[1] for r in rows],
                "start_ns": [r[2] for r in rows],
                "end_ns": [r[3] for r in rows],
                "accelerator_core": [r[4] for r in rows],
                "is_communication": [False] * len(rows),
            }
        )
    )


def on(kernels: pl.DataFrame, stream: int) -> pl.DataFrame:
    return kernels.filter(pl.col("stream_id") == stream).sort("start_ns")


def dominators(main: pl.DataFrame, op_type: str = "GroupedMatmul") -> np.ndarray:
    return (main["op_type"] == op_type).to_numpy()


def test_split_side_work_is_mostly_not_hidden() -> None:
    # dominator [1_000, 301_000]; side ops [1_000, 3_000] (under its start) and
    # [301_000, 501_000] (after its end): busy 2_000 + 200_000 = 202_000, hidden 2_000
    k = table(
        [
            (2, "GroupedMatmul", 1_000, 301_000, "MIX_AIC"),
            (3, "Swish", 1_000, 3_000, "AI_VECTOR_CORE"),
            (3, "MatMulV3", 301_000, 501_000, "AI_CORE"),
        ]
    )
    other = other_stream_busy(k, side_stream=3)
    assert [other[0].tolist(), other[1].tolist()] == [[1_000], [301_000]]
    side = on(k, 3)
    got = hiding.hidden_fraction(
        side["start_ns"], side["end_ns"], [0, 0], 1, other, [1_000], [301_000]
    )
    assert got.side_busy_ns.tolist() == [202_000]
    assert got.hidden_ns.tolist() == [2_000]
    assert got.under_dominator_ns.tolist() == [2_000]
    assert got.hidden_pct.tolist() == [2_000 / 202_000]
    # the window formula says real: side window [1_000, 501_000] holds the whole dominator
    t = layer_table(side, on(k, 2), dominators(on(k, 2)), other, T)
    assert t["overlap_pct"].to_list() == [300_000 / min(500_000, 300_000)]
    assert t["hidden_pct"].to_list() == [2_000 / 202_000]
    assert t["verdict"].to_list() == ["fake"]  # 0.0099 <= 0.05


def test_side_work_hidden_under_another_main_op() -> None:
    # Attention [0, 200_000], GroupedMatmul [200_000, 500_000]; side [10_000, 190_000]
    k = table(
        [
            (2, "Attention", 0, 200_000, "MIX_AIC"),
            (2, "GroupedMatmul", 200_000, 500_000, "MIX_AIC"),
            (3, "MatMulV3", 10_000, 190_000, "AI_CORE"),
        ]
    )
    main, side = on(k, 2), on(k, 3)
    t = layer_table(side, main, dominators(main), other_stream_busy(k, 3), T)
    row = t.row(0, named=True)
    assert (row["side_busy_ns"], row["hidden_ns"]) == (180_000, 180_000)
    assert row["hidden_pct"] == 1.0
    assert row["dominator_pct"] == 0.0  # nothing under the named dominator
    assert row["overlap_pct"] == 0.0  # the window formula: fake
    assert row["verdict"] == "real"


def test_assign_layers_by_overlap_then_nearest() -> None:
    ds, de = [100, 400, 700], [200, 500, 800]
    got = layering.assign_layers(
        [150, 350, 250, 850, 0, 450], [450, 380, 300, 900, 50, 750], ds, de
    )
    # [150,450]: 50 under d0, 50 under d1 (tie: the first); [350,380] and [250,300] lie
    # between d0 and d1, together [250,380]: 250 - 200 = 50 after d0, 400 - 380 = 20
    # before d1 -> both d1; [850,900]: after d2; [0,50]: before d0; [450,750]: 50 under
    # d1, 50 under d2, 200 over the gap -> d1
    assert got.tolist() == [0, 1, 1, 2, 0, 1]
    # alone in its gap, [250,300] is 50 after d0 and 100 before d1 -> d0
    assert layering.assign_layers([250], [300], ds, de).tolist() == [0]
    assert layering.assign_layers([5], [6], [], []).tolist() == [-1]


def test_a_lagging_side_stream_and_a_join_that_did_not_wait() -> None:
    # main: D1 [0,100], J1 [100,120], D2 [200,300], J2 [300,320]
    # side: [210,290] (layer 1's work, under D2) and [310,390] (after the last dominator)
    k = table(
        [
            (2, "GroupedMatmul", 0, 100, "MIX_AIC"),
            (2, "Add", 100, 120, "AI_VECTOR_CORE"),
            (2, "GroupedMatmul", 200, 300, "MIX_AIC"),
            (2, "Add", 300, 320, "AI_VECTOR_CORE"),
            (3, "MatMulV3", 210, 290, "AI_CORE"),
            (3, "MatMulV3", 310, 390, "AI_CORE"),
        ]
    )
    main, side = on(k, 2), on(k, 3)
    t = layer_table(side, main, dominators(main), other_stream_busy(k, 3), T)
    assert t["side_ops"].to_list() == [0, 2]  # both nearest to / under D2
    assert t["side_start_ns"].to_list() == [None, 210]
    assert t["side_end_ns"].to_list() == [None, 390]
    assert t["dom_start_ns"].to_list() == [0, 200]
    # busy 80 + 80; hidden under main [0,120] [200,320]: 80 + 10 ([310,320])
    assert t["hidden_pct"].to_list() == [None, 90 / 160]
    assert t["dominator_pct"].to_list() == [None, 80 / 160]
    # window [210,390] (180) vs D2 (100): overlap [210,300] = 90 -> 90 / 100
    assert t["overlap_pct"].to_list() == [None, 90 / 100]
    assert t["verdict"].to_list() == ["no-evidence", "real"]
    # J2 starts at 300, the side work ends at 390
    assert t["join_not_waited"].to_list() == [False, True]
    assert lag_pattern(t, side["start_ns"])
    assert not lag_pattern(t.slice(1), side["start_ns"])  # first layer has side work


def test_counts_and_the_fake_share_cap() -> None:
    assert hiding.verdict_counts([1.0, 0.3, 0.05, math.nan], T) == {
        "real": 1,
        "partial": 1,
        "fake": 1,
    }
    # 3 of 6 fake: the median 0.5 is real, 3 > 0.25 x 6 = 1.5 caps it at partial
    assert capped_verdict([1, 1, 1, 0, 0, 0], T) == "partial"
    # 1 of 5 fake: 1 <= 1.25, stays real; 2 of 5: 2 > 1.25, partial
    assert capped_verdict([1, 1, 1, 1, 0], T) == "real"
    assert capped_verdict([1, 1, 1, 0, 0], T) == "partial"
    assert capped_verdict([1, 1, 1, 0, 0], T, fake_share=0.5) == "real"  # 2 <= 2.5
    assert capped_verdict([0, 0, 0.2], T) == "fake"  # never raised
    assert capped_verdict([math.nan], T) == "no-evidence"


def test_helper_streams() -> None:
    # main stream 2 busy 1_000_000; 1% of it is 10_000
    k = table(
        [
            (2, "GroupedMatmul", 0, 1_000_000, "MIX_AIC"),
            (3, "DropoutGenMaskV2", 10, 3_010, "DSA_SQE"),  # helper core only
            (3, "DropoutGenMaskV2", 5_000, 8_000, "DSA_SQE"),
            (4, "Cast", 100, 9_100, "AI_CORE"),  # 9_000 < 10_000
            (5, "MatMulV3", 100, 20_100, "AI_CORE"),  # 20_000: judged
            (6, "IndexPut", 0, 500_000, "AI_CPU"),  # long, but AI_CPU only
        ]
    )
    assert helper_streams(k, main_stream=2) == (3, 4, 6)
    assert helper_streams(k, main_stream=2, share=0.001) == (3, 6)  # 9_000 >= 1_000
    # every stream as the main one, with busy times already measured (3: 3_000 + 3_000)
    busy = {2: 1_000_000, 3: 6_000, 4: 9_000, 5: 20_000, 6: 500_000}
    assert hiding.helper_streams_of(k, [2, 5, 7], busy) == {
        2: (3, 4, 6),
        5: (3, 6),  # 1% of 20_000 is 200: only the helper-core streams
        7: (3, 6),  # a main stream with no busy time here: helper cores only
    }
    # the busy times are taken as given: 2 at 100_000 makes 10_000 the cut, 4 stays out
    assert hiding.helper_streams_of(k, [2], {**busy, 2: 100_000, 4: 900}) == {2: (3, 4, 6)}
    assert hiding.helper_streams_of(k, [2], {**busy, 2: 100_000, 4: 1_000}) == {2: (3, 6)}


def test_main_waited_names_the_whole_chain() -> None:
    # main: X [0,100], idle, Cast [300,310], Swish [310,320], GroupedMatmul [320,620]
    # side [100,290]: nothing else ran meanwhile (hidden 0, fake)
    k = table(
        [
            (2, "X", 0, 100, "AI_CORE"),
            (2, "Cast", 300, 310, "AI_VECTOR_CORE"),
            (2, "Swish", 310, 320, "AI_VECTOR_CORE"),
            (2, "GroupedMatmul", 320, 620, "MIX_AIC"),
            (3, "MatMulV3", 100, 290, "AI_CORE"),
        ]
    )
    main, side = on(k, 2), on(k, 3)
    occ, layer, _ = layer_occurrences(side, main, dominators(main))
    other = other_stream_busy(k, 3)
    hidden = hiding.hidden_fraction(
        side["start_ns"], side["end_ns"], layer, 1, other, occ.dom_start, occ.dom_end
    )
    assert hidden.hidden_pct.tolist() == [0.0]
    got = barriers.main_waited(main, occ, hidden.hidden_pct, T)
    got = got.select("occurrence", "barrier", "chain", "start_ns")
    assert got.rows() == [(1, "Cast", "Cast -> Swish", 300)]
    # a real occurrence has no barrier
    assert barriers.main_waited(main, occ, np.array([1.0]), T).height == 0


def test_side_waited_names_the_late_producer_not_the_join() -> None:
    # main: GroupedMatmul [0,300], Cast [300,320] (placed after the dominator), idle,
    # Add [520,540] (the join); side [325,515] starts 5 ns after Cast ends
    k = table(
        [
            (2, "GroupedMatmul", 0, 300, "MIX_AIC"),
            (2, "Cast", 300, 320, "AI_VECTOR_CORE"),
            (2, "Add", 520, 540, "AI_VECTOR_CORE"),
            (3, "MatMulV3", 325, 515, "AI_CORE"),
        ]
    )
    main, side = on(k, 2), on(k, 3)
    got = barriers.side_waited(main, side, np.array([325]))
    assert got.drop("row").rows() == [(1, "Cast", 320, 325 - 320)]
    assert got["row"].to_list() == [1]  # Cast's row in ``main``
    # the side stream was busy until 323: it did not wait for Cast
    busy = table([(3, "Mul", 200, 323, "AI_CORE"), (3, "MatMulV3", 325, 515, "AI_CORE")])
    assert barriers.side_waited(main, busy, np.array([325])).height == 0
    # more than max_lag_ns after the op: not "right after"
    assert barriers.side_waited(main, side, np.array([325]), max_lag_ns=4).height == 0


def test_selection_restricts_and_placement_names_what_stayed() -> None:
    k = table(
        [
            (2, "MatMulV3", 0, 10, "AI_CORE"),
            (2, "MatMulV3", 20, 30, "AI_CORE"),
            (2, "MatMulV3", 40, 50, "AI_CORE"),
            (3, "MatMulV3", 0, 10, "AI_CORE"),
            (3, "MatMulV3", 20, 30, "AI_CORE"),
            (2, "SwiGlu", 60, 70, "AI_VECTOR_CORE"),
            (2, "SwiGlu", 80, 90, "AI_VECTOR_CORE"),
        ]
    )
    picked = k.filter(restricted_side_expr("MatMul|SwiGlu", 3, None))
    assert picked["stream_id"].to_list() == [3, 3]
    assert k.filter(restricted_side_expr(None, None, "^SwiGlu$")).height == 2
    assert k.filter(restricted_side_expr("MatMul", None, "SwiGlu")).height == 0
    assert k.filter(restricted_side_expr(None, None, None)).height == 0
    # no SwiGlu moved: both are named. MatMulV3 moved (2 on stream 3): without layers
    # (no dominator) nothing shows that the 3 on stream 2 are side work (issue 23)
    stayed = stayed_off_side(k, "MatMul|SwiGlu", None, side_stream=3)
    assert stayed.rows() == [("SwiGlu", 2, 2, 0)]
    assert stayed_phrases(stayed) == ["SwiGlu x2 on stream 2"]
