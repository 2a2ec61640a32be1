"""Plans: occurrence pairing, window and busy figures, placement, barrier search.

Captures are built by hand (times in ns after a 16-digit-µs epoch) so every
figure can be checked with visible arithmetic.
"""

from __future__ import annotations

import polars as pl
import pytest

from overlap_check.judge.pipeline import analyze_captures
from overlap_check.measure.occurrences import Occurrences, PlanStreams
from overlap_check.measure.plans import occurrences, tag
from overlap_check.measure.runs import make_samples
from overlap_check.model import Capture, Options, Plan, PlanResult, intervals
from overlap_check.model.table import conform

T0 = 1_736_408_883_704_643_212  # ns; kernel times below are offsets from it
MOE = Plan("moe-shared-expert", side="SharedExpert", dominator="GroupedMatmul")
Row = tuple[str, int, int, int]  # name, stream, start, end (ns after T0)


def capture(rows: list[Row], *, rank: int = 0, path: str = "run") -> Capture:
    frame = pl.DataFrame(
        {
            "name": [r[0] for r in rows],
            "stream_id": [r[1] for r in rows],
            "start_ns": [T0 + r[2] for r in rows],
            "end_ns": [T0 + r[3] for r in rows],
            "is_communication": [False] * len(rows),
            "rank": [rank] * len(rows),
        },
        schema_overrides={"stream_id": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
    )
    return Capture(path, "kernel_details.csv", rank, 0, "Level1", None, conform(frame))


def fake_layer(b: int) -> list[Row]:
    """Side ops run while the main stream idles; a Cast waits for them, then the dominator."""
    return [
        ("Attention", 2, b, b + 300),
        ("SharedExpert_gate", 3, b + 310, b + 400),
        ("SharedExpert_down", 3, b + 400, b + 500),
        ("Cast", 2, b + 505, b + 510),
        ("GroupedMatmul", 2, b + 510, b + 900),
    ]


def real_layer(b: int) -> list[Row]:
    return [
        ("Attention", 2, b, b + 290),
        ("GroupedMatmul", 2, b + 300, b + 900),
        ("SharedExpert_gate", 3, b + 400, b + 500),
        ("SharedExpert_down", 3, b + 500, b + 600),
    ]


def layers(make: object, n: int) -> list[Row]:
    assert callable(make)
    return [row for k in range(n) for row in make(k * 1000)]


def one_run(plan: Plan, rows: list[Row]) -> PlanResult:
    """The plan's result for one capture judged alone (no warm-up), main stream 2."""
    options = Options(plans=(plan,), main_stream=2, warmup=0, min_runs=1)
    (result,) = analyze_captures([capture(rows)], options).plans
    return result


def occ_of(plan: Plan, rows: list[Row]) -> Occurrences:
    samples, _ = make_samples([capture(rows)], "run", warmup=0, min_runs=1)
    return occurrences(tag(samples[0].kernels, plan), plan, PlanStreams(main=2, side=3))


# ----------------------------------------------------------------------------- pairing


def test_fake_60_layers_pair_one_to_one_where_a_global_window_reads_real() -> None:
    rows = layers(fake_layer, 60)
    result = one_run(MOE, rows)
    run = result.per_run[0]
    assert run.occurrences == 60 and run.judged == 60
    # Each layer: side window [b+310, b+500], dominator [b+510, b+900]: overlap 0.
    assert run.overlap_pct == 0.0
    assert result.verdict == "fake"
    # One global window per capture (the wrong rule) would call it real:
    side_hull = (T0 + 310, T0 + 59_000 + 500)
    dom_hull = (T0 + 510, T0 + 59_000 + 900)
    overlap = intervals.window_overlap(side_hull, dom_hull)
    global_pct = overlap / min(side_hull[1] - side_hull[0], dom_hull[1] - dom_hull[0])
    assert global_pct == (59_500 - 510) / (59_500 - 310)
    assert global_pct > 0.99


def test_pairing_every_side_op_with_every_dominator_would_also_be_wrong() -> None:
    rows = layers(fake_layer, 3)
    occ = occ_of(MOE, rows)
    # Side ops of layer k (start b+310) are paired with dominator k (ends b+900), not k-1.
    assert occ.side_count.tolist() == [2, 2, 2]
    assert (occ.dom_start - T0).tolist() == [510, 1510, 2510]
    assert (occ.side_start - T0).tolist() == [310, 1310, 2310]
    assert occ.pct.tolist() == [0.0, 0.0, 0.0]


def test_real_60_layers() -> None:
    result = one_run(MOE, layers(real_layer, 60))
    # Side window [b+400, b+600] lies inside [b+300, b+900]: 200 / min(200, 600).
    assert result.per_run[0].overlap_pct == 200 / 200
    assert result.per_run[0].occurrences == 60
    assert result.verdict == "real"
    assert result.busy_overlap_pct == 1.0
    assert result.barrier_candidates == ()


def test_partial_fraction() -> None:
    rows = [
        ("GroupedMatmul", 2, 510, 900),
        ("SharedExpert", 3, 310, 600),
    ]
    result = one_run(MOE, rows)
    # overlap = 600 - 510 = 90; min(600 - 310, 900 - 510) = 290.
    assert result.overlap_pct == 90 / 290
    assert result.verdict == "partial"


def test_busy_figure_differs_from_window_figure() -> None:
    rows = [
        ("GroupedMatmul", 2, 150, 750),
        ("SharedExpert_a", 3, 100, 200),
        ("SharedExpert_b", 3, 700, 800),
    ]
    result = one_run(MOE, rows)
    # Window: side [100, 800] (700), dominator [150, 750] (600): overlap 750 - 150 = 600.
    assert result.overlap_pct == 600 / min(700, 600)
    # Busy: side busy 100 + 100 = 200; inside the dominator (200-150) + (750-700) = 100.
    assert result.busy_overlap_pct == 100 / min(200, 600)


def test_overlapping_side_ops_count_once_in_busy_time() -> None:
    rows = [
        ("GroupedMatmul", 2, 0, 1000),
        ("SharedExpert_a", 3, 100, 300),
        ("SharedExpert_b", 4, 200, 400),  # a second side stream, overlapping the first
        ("SharedExpert_c", 3, 900, 1200),
    ]
    result = one_run(MOE, rows)
    # Side busy = |[100,400] ∪ [900,1200]| = 300 + 300; inside [0,1000]: 300 + 100.
    assert result.busy_overlap_pct == (300 + 100) / min(300 + 300, 1000)
    # Window: side [100, 1200] vs [0, 1000]: overlap 900, min(1100, 1000).
    assert result.overlap_pct == 900 / 1000


def test_side_work_after_the_last_dominator_joins_its_layer() -> None:
    rows = [
        ("GroupedMatmul", 2, 100, 200),
        ("GroupedMatmul", 2, 1100, 1200),
        ("GroupedMatmul", 2, 2100, 2200),
        ("SharedExpert", 3, 150, 180),  # under dominator 1
        ("SharedExpert", 3, 2300, 2350),  # after the last dominator: nearest is dominator 3
    ]
    occ = occ_of(MOE, rows)
    assert [occ.occurrence(k).status for k in range(3)] == ["ok", "no-side", "ok"]
    run = one_run(MOE, rows).per_run[0]
    assert (run.occurrences, run.judged, run.no_side, run.no_dominator) == (3, 2, 1, 0)
    # layer 1: 30 / min(30, 100) = 1.0; layer 3: [2300, 2350] vs [2100, 2200], overlap 0
    assert run.overlap_pct == (30 / 30 + 0 / 50) / 2
    assert [o.status for o in run.unpaired] == ["no-side"]
    assert [o.layer for o in run.layers] == [1, 2, 3]


def test_side_ops_without_any_dominator_are_reported_not_dropped() -> None:
    rows = [("Attention", 2, 100, 200), ("SharedExpert", 3, 150, 180)]
    run = one_run(MOE, rows).per_run[0]
    assert (run.occurrences, run.judged, run.no_dominator) == (1, 0, 1)
    assert [o.status for o in run.unpaired] == ["no-dominator"]


def test_a_side_op_touching_no_dominator_belongs_to_the_nearest_one() -> None:
    rows = [
        ("GroupedMatmul", 2, 0, 100),
        ("GroupedMatmul", 2, 200, 300),
        ("SharedExpert", 3, 100, 150),  # 0 after dominator 1 ends, 50 before dominator 2
    ]
    occ = occ_of(MOE, rows)
    assert occ.side_count.tolist() == [1, 0]
    # Layer 1: side [100, 150] after dominator [0, 100], touching: overlap 0.
    assert occ.pct[0] == 0.0


def test_touching_windows_do_not_overlap() -> None:
    rows = [("SharedExpert", 3, 100, 200), ("GroupedMatmul", 2, 200, 500)]
    result = one_run(MOE, rows)
    assert result.overlap_pct == 0.0
    assert result.verdict == "fake"


# ----------------------------------------------------------------------------- no dominator regex


def test_without_dominator_regex_the_longest_main_kernel_of_each_cluster_is_judged() -> None:
    plan = Plan("moe", side="SharedExpert")
    fake = one_run(plan, layers(fake_layer, 4))
    run = fake.per_run[0]
    # Clusters are cut by the Cast / GroupedMatmul / Attention between layers: 4 occurrences.
    # Cluster k's dominator: the longest main kernel ending in (b+310, b+1310]: GroupedMatmul
    # (390 ns) beats the next layer's Attention (300 ns).
    assert (run.occurrences, run.judged) == (4, 4)
    assert {o.dominator for o in run.worst} == {"GroupedMatmul"}
    assert fake.verdict == "fake"
    real = one_run(plan, layers(real_layer, 4))
    assert real.overlap_pct == 1.0
    assert real.verdict == "real"


def test_without_dominator_regex_no_main_kernel_means_no_dominator() -> None:
    plan = Plan("side-only", side_stream=3)
    result = one_run(plan, [("Lonely", 3, 0, 100)])
    assert result.per_run[0].no_dominator == 1
    assert result.verdict == "no-evidence"


# ----------------------------------------------------------------------------- placement (3a)


def test_side_ops_left_on_the_dominators_stream_are_not_split() -> None:
    rows = [(name, 2, s, e) for name, _, s, e in fake_layer(0)]  # everything on stream 2
    result = one_run(MOE, rows)
    assert result.verdict == "not-split"
    # placement names each op type that stayed, with its count (none of them moved)
    stayed = ("SharedExpert_down x1 on stream 2", "SharedExpert_gate x1 on stream 2")
    assert result.placement == result.stayed == stayed
    assert result.diagnosis.startswith(
        "3a logical split failed: stayed off the side stream: SharedExpert_down x1 on stream 2, "
        "SharedExpert_gate x1 on stream 2; put these ops"
    )
    assert result.overlap_pct is None  # no side op moved: nothing to measure


def test_side_ops_off_the_configured_side_stream_are_not_split() -> None:
    plan = Plan("moe", side="SharedExpert", dominator="GroupedMatmul", side_stream=3)
    rows = [(n, 5 if s == 3 else s, a, b) for n, s, a, b in real_layer(0)]
    result = one_run(plan, rows)
    assert result.verdict == "not-split"
    assert result.placement == (
        "SharedExpert_down x1 on stream 5",
        "SharedExpert_gate x1 on stream 5",
    )


MATMUL = "aclnnMatmul_MatMulV3Common_MatMulV3"  # an eager name: no module scope
SWIGLU = "aclnnSwiGlu_SwiGlu_SwiGlu"


def eager_capture() -> Capture:
    """Two layers (period 1000 ns) of eager kernels: a MatMulV3 on both streams in each, a
    SwiGlu on the side stream in layer 1 and left on the main stream in layer 2."""
    rows = []  # name, Type, stream, start, end
    for b in (0, 1000):
        rows += [
            (MATMUL, "MatMulV3", 2, b, b + 40),
            ("aclnnGroupedMatmul_GroupedMatmul", "GroupedMatmul", 2, b + 100, b + 700),
            (MATMUL, "MatMulV3", 3, b + 200, b + 300),
        ]
    rows += [(SWIGLU, "SwiGlu", 3, 300, 350), (SWIGLU, "SwiGlu", 2, 1040, 1090)]
    frame = pl.DataFrame(
        {
            "name": [r[0] for r in rows],
            "op_type": [r[1] for r in rows],
            "stream_id": [r[2] for r in rows],
            "start_ns": [T0 + r[3] for r in rows],
            "end_ns": [T0 + r[4] for r in rows],
            "is_communication": [False] * len(rows),
        },
        schema_overrides={"stream_id": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
    )
    return Capture("run", "kernel_details.csv", 0, 0, "Level1", None, conform(frame))


def eager_result(plan: Plan) -> PlanResult:
    options = Options(plans=(plan,), main_stream=2, warmup=0, min_runs=1)
    (result,) = analyze_captures([eager_capture()], options).plans
    return result


def test_side_stream_restricts_a_name_regex_and_placement_names_what_stayed() -> None:
    plan = Plan("eager", side="MatMulV3|SwiGlu", dominator="GroupedMatmul", side_stream=3)
    result = eager_result(plan)
    # Side ops = the matches on stream 3 only: layer 1 MatMul [200, 300] + SwiGlu [300, 350]
    # = 150 ns, layer 2 MatMul [1200, 1300] = 100 ns, each under its GroupedMatmul
    # ([100, 700], [1100, 1700]): hidden 150 / 150 and 100 / 100.
    assert result.hidden_pct == 1.0
    assert result.verdict_counts == (2, 0, 0)
    # Every op type named moved at least once: judged, with the one that stayed named:
    # layer 1's stream 3 ran a SwiGlu, layer 2's none, and layer 2 ran one on stream 2
    # ([1040, 1090]). The MatMulV3 at [0, 40] and [1000, 1040] are not named: each layer's
    # stream 3 ran its MatMulV3, so nothing shows they are side work (issue 23).
    assert result.verdict == "real"
    assert result.stayed == ("SwiGlu x1 on stream 2",)
    assert result.placement == ()
    assert "stayed off the side stream: SwiGlu x1 on stream 2" in result.diagnosis
    assert "the figures are of the 3 side ops that moved" in result.diagnosis


def test_without_side_stream_the_main_streams_matches_are_main_work() -> None:
    # The old selection took the main stream's MatMulV3 as side ops: a false not-split.
    result = eager_result(Plan("eager", side="MatMulV3", dominator="GroupedMatmul"))
    assert result.side_stream == 3
    assert result.verdict == "real"  # [200, 300] under [100, 700]; [1200, 1300] under [1100, 1700]
    assert result.hidden_pct == 1.0
    assert result.stayed == ()  # each layer's stream 3 ran its MatMulV3


def test_op_type_restricts_the_selection_and_an_op_that_never_moved_is_not_split() -> None:
    only_matmul = eager_result(
        Plan("mm", side="aclnn", op_type="^MatMulV3$", dominator="GroupedMatmul", side_stream=3)
    )
    assert only_matmul.verdict == "real"  # 100 / 100 ns hidden in each layer
    assert only_matmul.per_run[0].side_ops == 2
    assert only_matmul.stayed == ()  # each layer's MatMulV3 moved
    # an op type that never ran on the side stream is the 3a failure
    never = eager_result(Plan("gm", op_type="GroupedMatmul", side_stream=3))
    assert never.verdict == "not-split"
    assert never.placement == ("GroupedMatmul x2 on stream 2",)


def test_a_side_stream_that_is_the_dominators_stream_is_not_split() -> None:
    plan = Plan("eager", side="MatMulV3", dominator="GroupedMatmul", side_stream=2)
    result = eager_result(plan)
    # every MatMulV3 counts as stayed: 2 on stream 2 (the dominator's) and 2 on stream 3
    assert result.verdict == "not-split"
    assert result.placement == ("MatMulV3 x2 on stream 2", "MatMulV3 x2 on stream 3")


def test_no_side_ops_and_no_dominator_are_no_evidence() -> None:
    rows = [("Attention", 2, 0, 100)]
    no_side = one_run(MOE, [*rows, ("GroupedMatmul", 2, 100, 200)])
    assert no_side.verdict == "no-evidence"
    assert "no compute kernel matched the side regex 'SharedExpert'" in no_side.diagnosis
    no_dom = one_run(MOE, [*rows, ("SharedExpert", 3, 0, 50)])
    assert no_dom.verdict == "no-evidence"
    assert "dominator regex 'GroupedMatmul'" in no_dom.diagnosis


def test_streams_are_inferred_from_the_kernels() -> None:
    result = one_run(MOE, layers(real_layer, 2))
    assert (result.main_stream, result.side_stream) == (2, 3)


# ----------------------------------------------------------------------------- barrier search (3b)


def test_barrier_cast_is_named_first() -> None:
    result = one_run(MOE, layers(fake_layer, 60))
    first = result.barrier_candidates[0]
    assert first.name == "Cast"
    assert first.stream_id == 2
    assert first.after_side_end_ns == 505 - 500
    assert first.gap_ns == 505 - 300  # idle since Attention ended
    assert first.covers_side_window  # the gap began before the side window (300 <= 310)
    assert first.occurrences == 60
    assert first.start_ns == T0 + 505
    # the main stream waited for the side stream: the chain up to the dominator is Cast alone
    assert (first.waited, first.chain) == ("main", "Cast")
    assert "barrier candidate: Cast (chain Cast up to the dominator) on stream 2" in (
        result.diagnosis
    )
    assert "the main stream waited for the side stream" in result.diagnosis
    assert (
        "put that pre-computation in the stream-switch block, the wait after the dominator"
        in result.diagnosis
    )


def test_barrier_candidates_ranked_by_how_often_they_are_first() -> None:
    rows = layers(fake_layer, 3)
    # Layer 3 waits on a Swish instead of the Cast.
    rows = [
        ("Swish", 2, s, e) if (n == "Cast" and s > 2000) else (n, st, s, e) for n, st, s, e in rows
    ]
    result = one_run(MOE, rows)
    assert [(b.name, b.occurrences) for b in result.barrier_candidates] == [
        ("Cast", 2),
        ("Swish", 1),
    ]


def test_no_barrier_search_without_fake_occurrences() -> None:
    result = one_run(MOE, layers(real_layer, 3))
    assert result.barrier_candidates == ()


def test_only_warm_runs_are_judged_and_searched_for_barriers() -> None:
    real = [capture(layers(real_layer, 2), path=f"r{i}") for i in range(2)]
    fake = [capture(layers(fake_layer, 2), path=f"f{i}") for i in range(3)]
    result = analyze_captures([*real, *fake], Options(plans=(MOE,))).plans[0]
    # Runs 1-2 are warm-up (overlap 1.0, discarded); runs 3-5 have overlap 0 in both layers.
    assert [(r.run, r.warm, r.overlap_pct) for r in result.per_run] == [
        (1, False, 1.0),
        (2, False, 1.0),
        (3, True, 0.0),
        (4, True, 0.0),
        (5, True, 0.0),
    ]
    assert (result.verdict, result.overlap_pct, result.runs_used) == ("fake", 0.0, 3)
    assert result.fake_occurrences == 3 * 2
    (cast,) = result.barrier_candidates
    assert (cast.name, cast.occurrences, cast.run, cast.occurrence) == ("Cast", 3 * 2, 3, 1)
    swapped = analyze_captures([*fake[:2], *real, fake[2]], Options(plans=(MOE,))).plans[0]
    # The fake runs 1-2 are warm-up: one fake warm run (5) of three. The median is real, but
    # 2 of the 3 * 2 warm occurrences are fake, more than a quarter (1.5): at best partial.
    assert (swapped.verdict, swapped.overlap_pct, swapped.fake_occurrences) == ("partial", 1.0, 2)
    assert swapped.verdict_counts == (2 * 2, 0, 2)
    assert [(b.name, b.occurrences, b.run) for b in swapped.barrier_candidates] == [("Cast", 2, 5)]


@pytest.mark.parametrize("fail_on", ["fake", "partial"])
def test_pipeline_fails_fake_plan(fail_on: str) -> None:
    caps = [capture(layers(fake_layer, 2), path=f"r{i}") for i in range(5)]
    report = analyze_captures(caps, Options(plans=(MOE,), fail_on=fail_on))  # type: ignore[arg-type]
    assert report.exit_code == 1
    assert report.plans[0].verdict == "fake"


def test_tag_flags_side_and_dominator_kernels() -> None:
    kernels = pl.DataFrame(
        {
            "name": ["SharedExpert_A", "GroupedMatmul", "Cast", "GroupedMatmul_Shared"],
            "stream_id": [3, 2, 2, 3],
            "start_ns": [0, 10, 20, 30],
            "end_ns": [5, 15, 25, 35],
            "is_communication": [False] * 4,
        }
    )
    flags = lambda plan: tag(kernels, plan).select("_side", "_dom").rows()  # noqa: E731
    # side regex on any stream; a dominator that is also a side op is a side op only
    assert flags(Plan("p", side="Shared", dominator="GroupedMatmul")) == [
        (True, False), (False, True), (False, False), (True, False)
    ]  # fmt: skip
    # no side regex: every kernel on side_stream; no dominator regex: no dominator flag
    assert flags(Plan("s", side_stream=3)) == [
        (True, False), (False, False), (False, False), (True, False)
    ]  # fmt: skip


def test_longest_per_group_in_order_and_shuffled() -> None:
    import numpy as np

    from overlap_check.measure.plans import _longest_per_group

    group = np.array([0, 0, 0, 2, 2, 5], dtype=np.int64)
    length = np.array([3, 9, 9, 1, 4, 7], dtype=np.int64)
    groups, first = _longest_per_group(group, length)
    # Group 0: 9 at positions 1 and 2 (first wins); group 2: 4 at 4; group 5: 7 at 5.
    assert groups.tolist() == [0, 2, 5] and first.tolist() == [1, 4, 5]
    shuffle = np.array([5, 3, 0, 4, 2, 1])
    groups, first = _longest_per_group(group[shuffle], length[shuffle])
    assert groups.tolist() == [0, 2, 5]
    assert length[shuffle][first].tolist() == [9, 4, 7]


def test_each_side_op_keeps_its_own_stream_when_a_long_op_belongs_to_a_later_layer() -> None:
    # Two side streams. By start, b (stream 4, [40, 290]) comes before a (stream 3, [50, 80]);
    # b overlaps D1 [0, 100] by 60 and D2 [200, 300] by 90, so it belongs to layer 2 and the
    # layers' order puts a first. Each op is hidden only by the other streams' compute:
    # a: under D1, 30 of 30; b: under D1 and D2 (a adds nothing inside D1),
    # (100 - 40) + (290 - 200) = 60 + 90 = 150 of 250. Were b's stream taken for a's (3),
    # b would count itself as the compute hiding it: 250 of 250.
    rows = [
        ("GroupedMatmul", 2, 0, 100),
        ("GroupedMatmul", 2, 200, 300),
        ("SharedExpert_a", 3, 50, 80),
        ("SharedExpert_b", 4, 40, 290),
    ]
    starts, _, layer, stream = occ_of(MOE, rows).side_ops
    assert (starts - T0).tolist() == [50, 40]
    assert layer.tolist() == [0, 1]
    assert stream.tolist() == [3, 4]
    hidden = {o.index: (o.hidden_ns, o.side_busy_ns) for o in one_run(MOE, rows).per_run[0].worst}
    assert hidden == {1: (30, 30), 2: (150, 250)}


def test_a_sample_lists_at_most_max_listed_layers_and_always_its_worst() -> None:
    from overlap_check.model import MAX_LISTED_LAYERS
    from overlap_check.report import text

    # 1,003 layers; layer 1,002 (index 1,001) is fake, the others real (hidden_pct 1.0):
    # the table lists the first MAX_LISTED_LAYERS = 1,000 and the fake one, the worst
    rows = [row for k in range(1003) for row in (fake_layer if k == 1001 else real_layer)(k * 1000)]
    result = one_run(MOE, rows)
    (run,) = result.per_run
    assert MAX_LISTED_LAYERS == 1_000
    assert run.occurrences == 1003
    assert [o.index for o in run.layers] == [*range(1, 1001), 1002]
    assert run.worst[0].index == 1002 and run.worst[0].hidden_pct == 0.0
    report = analyze_captures([capture(rows)], Options(plans=(MOE,), main_stream=2, warmup=0))
    assert "shown; 1001 of 1003 in JSON):" in text.render(report)
