"""Pictures: the views (exact figures) and every chart really drawn, PNG and SVG.

Captures are built here from explicit kernel tables, so the expected windows,
overlaps and gaps are visible arithmetic; the bundled fixtures are drawn by the
CLI tests at the end.
"""

from __future__ import annotations

import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from overlap_check.judge.pipeline import check
from overlap_check.model import (
    BarrierCandidate,
    Capture,
    DeviceCores,
    Occurrence,
    Options,
    Plan,
    PlanResult,
    PlanRun,
    Report,
)
from overlap_check.model.errors import UsageError
from overlap_check.model.table import conform
from overlap_check.report.plots import output_paths, picture_format, write_plots
from overlap_check.report.plots.picking import pick_occurrence
from overlap_check.report.plots.select import Selection, charts
from overlap_check.report.plots.views import (
    TimelineView,
    block_demand,
    busiest_window,
    clip,
    concurrent_segments,
    demand_steps,
    idle_gaps,
    lane_order,
    occurrence_range,
    short_name,
    short_names,
    stream_view_width,
)

REPO = Path(__file__).resolve().parents[1]
T0 = 1_736_408_883_704_643_212  # a real 19-digit local-epoch ns value
US = 1_000
PLAN = Plan(
    "moe-shared-expert",
    side="SharedExpert",
    dominator="GroupedMatmul",
    side_stream=3,
    main_stream=2,
)
DEVICE = DeviceCores(aicore=24, vectorcore=48, source="info.json")
SIDE_NAMES = (
    "aclnnSharedExpertGate_SharedExpert_Matmul",
    "aclnnSharedExpertUp_SharedExpert_Matmul",
    "aclnnSwish_SharedExpertAct_Swish",
    "aclnnSharedExpertDown_SharedExpert_Matmul",
)
# One layer, relative to its side window start s (all in µs):
#   side ops on stream 3 at s + 0/30/60/90, 28 µs each -> side window [s, s + 118]
#   GroupedMatmul on stream 2 from s + DOM_OFFSET, 150 µs
SIDE_LEN = 118 * US
DOM_LEN = 150 * US
REAL_OFFSET = 4 * US  # overlap 118 - 4 = 114 µs -> 114 / 118
PARTIAL_OFFSET = 88_500  # overlap 118 - 88.5 = 29.5 µs -> 29.5 / 118 = 0.25
FAKE_OFFSET = SIDE_LEN + 7 * US  # dominator starts 7 µs after the side window ends


def kernel(
    name: str,
    stream: int | None,
    start: int,
    dur: int,
    core: str = "AI_CORE",
    blocks: int = 0,
    mix: int = 0,
    rank: int = 0,
) -> dict[str, object]:
    comm = stream is None
    return {
        "rank": rank,
        "device": 0,
        "step": None,
        "stream_id": stream,
        "task_id": 1,
        "name": name,
        "op_type": None,
        "accelerator_core": "HCCL" if comm else core,
        "is_communication": comm,
        "start_ns": start,
        "end_ns": start + dur,
        "block_num": None if comm else blocks,
        "mix_block_num": None if comm else mix,
    }


def layer(t: int, dom_offset: int, rows: list[dict[str, object]], rank: int) -> int:
    """Appends one layer starting at t; returns where the next layer starts."""
    for i in range(3):  # three small vector ops on the main stream
        rows.append(
            kernel(
                "aclnnAdd_AddAiCore_Add", 2, t + i * 9 * US, 8 * US, "AI_VECTOR_CORE", 48, rank=rank
            )
        )
    s = t + 28 * US
    for i, name in enumerate(SIDE_NAMES):
        rows.append(kernel(name, 3, s + i * 30 * US, 28 * US, "AI_CORE", 12, rank=rank))
    fake = dom_offset > SIDE_LEN
    cast = s + SIDE_LEN + 2 * US if fake else t + 27 * US  # the barrier, or harmless early
    rows.append(
        kernel(
            "aclnnCast_CastAiCore_Cast",
            2,
            cast,
            1 * US if not fake else 4 * US,
            "AI_VECTOR_CORE",
            40,
            rank=rank,
        )
    )
    g = s + dom_offset
    rows.append(
        kernel(
            "aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul",
            2,
            g,
            DOM_LEN,
            "MIX_AIC",
            24,
            48,
            rank=rank,
        )
    )
    end = max(g + DOM_LEN, s + SIDE_LEN) + 1 * US
    rows.append(kernel("hcom_allReduce__868_0_1", None, end, 20 * US, rank=rank))
    for i in range(4):
        rows.append(
            kernel(
                "aclnnMul_MulAiCore_Mul",
                2,
                end + i * 6 * US,
                5 * US,
                "AI_VECTOR_CORE",
                48,
                rank=rank,
            )
        )
    return end + 30 * US


def capture(
    dom_offset: int,
    *,
    rank: int = 0,
    run: int = 1,
    layers: int = 6,
    device: DeviceCores | None = DEVICE,
    steps: int = 0,
) -> Capture:
    """``layers`` layers; with ``steps``, the layers are split evenly into that many steps."""
    rows: list[dict[str, object]] = []
    t = T0 + run * 10**9  # each run has its own time base
    for i in range(layers):
        first = len(rows)
        t = layer(t, dom_offset, rows, rank)
        for row in rows[first:]:
            row["step"] = 50 + i * steps // layers if steps else None
    return Capture(
        path=f"synthetic/rank{rank}/run{run}",
        source="kernel_details.csv",
        rank=rank,
        device=0,
        level="Level1",
        capture_time_ns=t,
        kernels=conform(pl.DataFrame(rows)),
        device_cores=device,
    )


def runs(
    dom_offset: int, n: int = 5, rank: int = 0, cold_offset: int | None = None, layers: int = 6
) -> list[Capture]:
    """n runs; the first two (cold) may use another layout."""
    return [
        capture(
            cold_offset if cold_offset is not None and i <= 2 else dom_offset,
            rank=rank,
            run=i,
            layers=layers,
        )
        for i in range(1, n + 1)
    ]


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def assert_png(path: Path, floor: int = 15_000) -> tuple[int, int]:
    width, height = png_size(path)
    assert 800 <= width <= 2000 and 300 <= height <= 1600
    assert path.stat().st_size > floor  # a blank canvas of this size is far smaller
    return width, height


def assert_svg(path: Path) -> None:
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert path.stat().st_size > 20_000


# --------------------------------------------------------------------------- views


def test_short_names_strip_aclnn_parts_and_numeric_ids() -> None:
    names = pl.Series(
        [
            "aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul",
            "aclnnCast_CastAiCore_Cast",
            "hcom_allReduce__868_0_1",
            "Default/network/MatMul-op12",
            "aclnnInplaceCopy",
            "Cast",
            "AVeryLongKernelNameThatGoesOnAndOnForever",
        ]
    )
    assert short_names(names).to_list() == [
        "GroupedMatmul",
        "Cast",
        "hcom_allReduce",
        "MatMul-op12",
        "InplaceCopy",
        "Cast",
        "AVeryLongKernelNameThatGoesO…",  # 28 characters kept
    ]
    assert short_name("aclnnSwish_SharedExpertAct_Swish") == "Swish"


def test_occurrence_range_pads_the_hull_by_a_share_of_it() -> None:
    hull = 200_000 - 0  # side [0, 100 µs], dominator [50, 200 µs], a mark at 120 µs
    pad = int(hull * 0.15)
    assert occurrence_range([(0, 100_000), (50_000, 200_000), None], [120_000]) == (
        0 - pad,
        200_000 + pad,
    )
    # A zero-length window still gets 1 µs each side; nothing at all gives None.
    assert occurrence_range([(5_000, 5_000)]) == (5_000 - 1_000, 5_000 + 1_000)
    assert occurrence_range([None, None]) is None


def test_lane_order_main_then_side_then_others() -> None:
    assert lane_order([7, 3, 2, 5], main=2, side=3) == [2, 3, 5, 7]
    assert lane_order([7, 5], main=2, side=None) == [5, 7]  # main not in view


def test_idle_gaps_between_busy_intervals_only() -> None:
    rows = conform(
        pl.DataFrame(
            [
                kernel("a", 2, 0, 10),
                kernel("b", 2, 5, 10),  # merged busy [0, 15]
                kernel("c", 2, 40, 10),  # gap 15 -> 40 (25 ns)
                kernel("d", 2, 52, 10),  # gap 50 -> 52 (2 ns)
                kernel("e", 3, 15, 25),  # another stream does not fill stream 2's gap
            ]
        )
    )
    starts, ends = idle_gaps(rows, 2, 0, 100, min_gap_ns=3)
    assert starts.tolist() == [15] and ends.tolist() == [40]
    starts, ends = idle_gaps(rows, 2, 0, 100, min_gap_ns=1)
    assert starts.tolist() == [15, 50] and ends.tolist() == [40, 52]
    # One kernel in view: no evidence of idleness at all.
    assert idle_gaps(rows, 2, 38, 49, 1)[0].size == 0


def test_concurrent_segments_and_busiest_window() -> None:
    rows = conform(
        pl.DataFrame(
            [
                kernel("m1", 2, 0, 1_000),
                kernel("s1", 3, 900, 300),  # 2 streams on [900, 1000]
                kernel("m2", 2, 5_000, 1_000),
                kernel("s2", 3, 5_100, 800),  # on [5100, 5900]
                kernel("m3", 2, 9_000, 1_000),
            ]
        )
    )
    starts, ends = concurrent_segments(rows, 0, 10_000)
    assert starts.tolist() == [900, 5_100] and ends.tolist() == [1_000, 5_900]
    starts, ends = concurrent_segments(rows, 5_500, 10_000)  # clipped to the range
    assert starts.tolist() == [5_500] and ends.tolist() == [5_900]
    # A 2 µs range: the one around [5100, 5900] holds 800 ns of concurrency, the
    # one around [900, 1000] only 100 ns. It starts width/10 before the stretch.
    assert busiest_window(rows, 2_000) == (5_100 - 200, 5_100 - 200 + 2_000)
    # The whole capture fits: the whole capture.
    assert busiest_window(rows, 20_000) == (0, 10_000)


def test_busiest_window_without_concurrency_takes_the_densest_range() -> None:
    rows = conform(
        pl.DataFrame(
            [kernel("x", 2, 0, 10)]
            + [kernel("y", 2, 1_000 + 20 * i, 10) for i in range(5)]
            + [kernel("z", 2, 9_000, 10)]
        )
    )
    assert busiest_window(rows, 500) == (1_000, 1_500)  # 5 starts in [1000, 1500]
    assert stream_view_width(rows) == 9_010 - 0  # few kernels: the whole span


def test_block_demand_follows_the_contention_rule_and_caps_at_the_device() -> None:
    rows = conform(
        pl.DataFrame(
            [
                kernel("cube", 2, 0, 10, "AI_CORE", 30),
                kernel("vec", 2, 0, 10, "AI_VECTOR_CORE", 256),
                kernel("mixc", 3, 0, 10, "MIX_AIC", 20, 40),
                kernel("mixv", 3, 0, 10, "MIX_AIV", 40, 80),
                kernel("cpu", 3, 0, 10, "AI_CPU", 4),
                kernel("hccl", None, 0, 10),
            ]
        )
    )
    raw = block_demand(rows)
    assert raw["aicore"].to_list() == [30, 0, 20, 0, 0]  # MIX_AIV Mix Block Num left out
    assert raw["vectorcore"].to_list() == [0, 256, 40, 40, 0]
    capped = block_demand(rows, DEVICE)
    assert capped["aicore"].to_list() == [24, 0, 20, 0, 0]
    assert capped["vectorcore"].to_list() == [0, 48, 40, 40, 0]


def test_demand_steps_stack_per_stream_on_a_common_grid() -> None:
    rows = conform(
        pl.DataFrame(
            [
                kernel("a", 2, 0, 100, "AI_CORE", 10),
                kernel("b", 2, 50, 100, "AI_CORE", 5),  # stream 2: 10, 15 on [50, 100], 5
                kernel("c", 3, 80, 40, "AI_CORE", 20),  # stream 3: 20 on [80, 120]
            ]
        )
    )
    edges, levels = demand_steps(block_demand(rows), "aicore", [2, 3], 0, 200)
    assert edges.tolist() == [0, 50, 80, 100, 120, 150, 200]
    assert levels.tolist() == [
        [10, 10 + 5, 10 + 5, 5, 5, 0],
        [0, 0, 20, 20, 0, 0],
    ]
    # A range that starts inside kernels clips them.
    edges, levels = demand_steps(block_demand(rows), "aicore", [2, 3], 90, 110)
    assert edges.tolist() == [90, 100, 110]
    assert levels.tolist() == [[15, 5], [20, 20]]


def test_file_names_and_formats() -> None:
    out = Path("pics/out.png")
    slugs = ["timeline-a", "timeline-b", "runs", "timeline-b"]
    assert output_paths(out, slugs) == [
        Path("pics/out.png"),
        Path("pics/out-timeline-b.png"),
        Path("pics/out-runs.png"),
        Path("pics/out-timeline-b-2.png"),
    ]
    assert picture_format(Path("x.SVG")) == "svg"
    with pytest.raises(UsageError, match="picture format"):
        picture_format(Path("x.pdf"))


# --------------------------------------------------------------------------- choosing


def occ(index: int, pct: float | None, status: str = "ok") -> Occurrence:
    return Occurrence(
        index=index,
        side_ops=4,
        side_start_ns=0,
        side_end_ns=10,
        dominator="G",
        dom_start_ns=0,
        dom_end_ns=10,
        overlap_ns=0,
        overlap_pct=pct,
        busy_overlap_pct=pct,
        status=status,
        hidden_pct=pct,  # the deciding figure: the pick follows it
    )  # type: ignore[arg-type]


def result(per_run: tuple[PlanRun, ...]) -> PlanResult:
    return PlanResult(
        name="p",
        rank=0,
        verdict="partial",
        overlap_pct=0.3,
        provisional=False,
        side_stream=3,
        main_stream=2,
        per_run=per_run,
    )


def test_pick_occurrence_prefers_the_worst_warm_one() -> None:
    per_run = (
        PlanRun(
            run=1,
            warm=False,
            overlap_pct=0.0,
            occurrences=9,
            busy_overlap_pct=None,
            worst=(occ(2, 0.0),),
        ),  # cold: lower, but not judged
        PlanRun(
            run=3,
            warm=True,
            overlap_pct=0.4,
            occurrences=9,
            busy_overlap_pct=None,
            worst=(occ(4, 0.3), occ(5, 0.35)),
        ),
        PlanRun(
            run=4,
            warm=True,
            overlap_pct=0.4,
            occurrences=9,
            busy_overlap_pct=None,
            worst=(occ(7, 0.2), occ(1, None, "no-side")),
        ),
    )
    plan_run, chosen = pick_occurrence(result(per_run), None, None)  # type: ignore[misc]
    assert (plan_run.run, chosen.index if chosen else None) == (4, 7)
    plan_run, chosen = pick_occurrence(result(per_run), 3, None)  # type: ignore[misc]
    assert (plan_run.run, chosen.index if chosen else None) == (3, 4)
    plan_run, chosen = pick_occurrence(result(per_run), 3, 5)  # type: ignore[misc]
    assert chosen is not None and chosen.index == 5
    plan_run, chosen = pick_occurrence(result(per_run), 3, 8)  # type: ignore[misc]
    assert plan_run.run == 3 and chosen is None  # not recorded: measured by the caller
    with pytest.raises(UsageError, match="no occurrence 10"):
        pick_occurrence(result(per_run), 3, 10)
    # --occurrence without --run: a warm run that lists it (4), not the cold run 1 listed
    # first (before: run 1, against --run's help), as for one no run lists (9: run 3)
    cold_too = (replace(per_run[0], worst=(occ(7, 0.0),)), *per_run[1:])
    plan_run, chosen = pick_occurrence(result(cold_too), None, 7)  # type: ignore[misc]
    assert (plan_run.run, plan_run.warm, chosen.index if chosen else None) == (4, True, 7)
    plan_run, chosen = pick_occurrence(result(cold_too), None, 9)  # type: ignore[misc]
    assert (plan_run.run, chosen) == (3, None)
    with pytest.raises(UsageError, match="no run 2"):
        pick_occurrence(result(per_run), 2, None)
    assert pick_occurrence(result(()), None, None) is None


# --------------------------------------------------------------------------- charts


@pytest.fixture(scope="module")
def fake_report() -> tuple[Report, list[Capture]]:
    captures = runs(FAKE_OFFSET)
    return check(captures, Options(plans=(PLAN,))), captures


def texts(figure: object) -> list[str]:
    return [t.get_text() for t in figure.findobj(lambda a: hasattr(a, "get_text"))]  # type: ignore[attr-defined]


def test_fake_plan_draws_every_chart(tmp_path: Path, fake_report) -> None:  # type: ignore[no-untyped-def]
    report, captures = fake_report
    assert report.plans[0].verdict == "fake"
    written = write_plots(report, captures, tmp_path / "fake.png")
    assert [p.name for p in written] == [
        "fake.png",
        "fake-runs.png",
        "fake-demand-moe-shared-expert.png",
    ]
    # Timeline: 3 window rows + lanes for streams 2, 3 and communication = 6 rows.
    assert assert_png(written[0]) == (1400, round(100 * (1.9 + 0.5 * 6)))
    assert assert_png(written[1]) == (1100, round(100 * (1.6 + 2.6 * 1)))
    assert assert_png(written[2]) == (1400, 600)


def test_fake_timeline_marks_the_barrier_and_the_idle_gap(fake_report) -> None:  # type: ignore[no-untyped-def]
    from overlap_check.report.plots.timeline import draw_timeline

    report, captures = fake_report
    view = charts(report, captures, Selection(kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    side, dom = view.side_window, view.dom_window
    assert side is not None and dom is not None
    assert side[1] - side[0] == SIDE_LEN and dom[1] - dom[0] == DOM_LEN
    assert dom[0] - side[1] == FAKE_OFFSET - SIDE_LEN  # 7 µs apart
    assert [b.name for b in view.barriers] == ["aclnnCast_CastAiCore_Cast"]
    # hidden_pct decides: it is the title's figure, with the occurrence's band
    assert "run 3 (warm)" in view.title and "hidden_pct 0.000 (fake)" in view.title
    labels = texts(draw_timeline(view))
    # The last Add ends at t + 18 + 8 = t + 26 µs; the Cast starts at the side window's
    # end + 2 µs = (t + 28) + 118 + 2 = t + 148 µs: 148 - 26 = 122 µs idle before it.
    assert "barrier? Cast\nidle 122 µs before" in labels
    assert any(t.startswith("no overlap: windows 7 µs apart") for t in labels)
    assert "idle 122 µs" in labels
    assert "GroupedMatmul" in labels and "FAKE" in labels


def test_real_plan_timeline_shows_the_overlap(tmp_path: Path) -> None:
    from overlap_check.report.plots.timeline import draw_timeline

    captures = runs(REAL_OFFSET, cold_offset=FAKE_OFFSET)  # cold runs would flip it
    report = check(captures, Options(plans=(PLAN,)))
    assert report.plans[0].verdict == "real"
    view = charts(report, captures, Selection(kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    assert view.overlap_pct == pytest.approx((SIDE_LEN - REAL_OFFSET) / SIDE_LEN)
    labels = texts(draw_timeline(view))
    assert "  114 µs = overlap_pct 0.97" in labels  # (118 - 4) / 118
    assert "REAL" in labels and not any("barrier?" in t for t in labels)
    runs_view = charts(report, captures, Selection(kinds=("runs",)))[0].view
    points = runs_view.panels[0].series[0].points  # type: ignore[union-attr]
    # the runs chart draws what the bands judge, hidden_pct: the four side ops of 28 µs
    # ([0, 28], [30, 58], [60, 88], [90, 118] after s) are 112 µs busy, and the dominator
    # from s + 4 covers all but the first op's first 4 µs: (112 - 4) / 112 = 0.964
    assert runs_view.figure == "hidden_pct"
    assert [(p.run, p.warm, round(p.value or 0, 3)) for p in points] == [
        (1, False, 0.0),
        (2, False, 0.0),
        (3, True, 0.964),
        (4, True, 0.964),
        (5, True, 0.964),
    ]
    written = write_plots(report, captures, tmp_path / "real.svg")
    for path in written:
        assert_svg(path)


def test_partial_plan_and_the_demand_above_the_device(tmp_path: Path) -> None:
    from overlap_check.report.plots.demand import draw_demand

    captures = runs(PARTIAL_OFFSET)
    report = check(captures, Options(plans=(PLAN,)))
    assert report.plans[0].overlap_pct == pytest.approx(29_500 / 118_000)
    assert report.plans[0].verdict == "partial"
    chosen = charts(report, captures, Selection(kinds=("demand",)))
    view = chosen[0].view
    # During the overlap the side ops (12 cube blocks) run beside the
    # GroupedMatmul (24, capped at the device's 24): 36 > 24.
    _edges, levels = demand_steps(
        block_demand(view.kernels, DEVICE),
        "aicore",
        [2, 3],  # type: ignore[union-attr]
        view.start_ns,
        view.end_ns,
    )  # type: ignore[union-attr]
    assert int(levels.sum(axis=0).max()) == 24 + 12
    labels = texts(draw_demand(view))  # type: ignore[arg-type]
    assert "device max 24" in labels and "above device max" in labels
    # a guessed count says so on the chart (issue 23 point 13), an unknown one draws no line
    from dataclasses import replace as replaced

    from overlap_check.model import DeviceCores

    guessed = texts(draw_demand(replaced(view, device=DeviceCores(24, 0, "observed"))))  # type: ignore[arg-type]
    assert "device max 24 (guess)" in guessed
    assert not any(label.startswith("device max 0") for label in guessed)
    written = write_plots(report, captures, tmp_path / "partial.png", kinds=("demand",))
    assert [p.name for p in written] == ["partial.png"]
    assert_png(written[0])


def test_captures_without_block_counts_draw_no_demand_chart(tmp_path: Path) -> None:
    # a CUDA (Kineto) trace has no Block Num: its demand chart would be two empty panels
    counted = runs(PARTIAL_OFFSET)
    blank = pl.lit(None, pl.Int64)
    captures = [
        replace(c, kernels=c.kernels.with_columns(block_num=blank, mix_block_num=blank))
        for c in counted
    ]
    report = check(captures, Options(plans=(PLAN,)))
    assert [c.kind for c in charts(report, captures, Selection())] == ["timeline", "runs"]
    with pytest.raises(UsageError, match="no block counts"):
        charts(report, captures, Selection(kinds=("demand",)))
    # one capture with a count is enough to draw it
    mixed = [counted[0], *captures[1:]]
    assert [c.kind for c in charts(report, mixed, Selection())][-1] == "demand"


def test_multi_rank_names_files_by_rank(tmp_path: Path) -> None:
    captures = runs(REAL_OFFSET, rank=0) + runs(FAKE_OFFSET, rank=1)
    report = check(captures, Options(plans=(PLAN,)))
    assert [(p.rank, p.verdict) for p in report.plans] == [(0, "real"), (1, "fake")]
    written = write_plots(report, captures, tmp_path / "job.png")
    assert [p.name for p in written] == [
        "job.png",
        "job-timeline-moe-shared-expert-rank1.png",
        "job-runs.png",
        "job-demand-moe-shared-expert-rank0.png",
        "job-demand-moe-shared-expert-rank1.png",
    ]
    for path in written:
        assert_png(path)
    only = write_plots(report, captures, tmp_path / "r1.png", rank=1, kinds=("timeline",))
    assert [p.name for p in only] == ["r1.png"]
    runs_view = charts(report, captures, Selection(kinds=("runs",)))[0].view
    assert [s.label for s in runs_view.panels[0].series] == ["rank 0", "rank 1"]  # type: ignore[union-attr]
    with pytest.raises(UsageError, match="rank 7"):
        write_plots(report, captures, tmp_path / "x.png", rank=7)
    with pytest.raises(UsageError, match="no plan named 'nope'"):
        write_plots(report, captures, tmp_path / "x.png", plan="nope")


def test_chosen_occurrence_not_in_the_report_is_measured(tmp_path: Path) -> None:
    captures = runs(PARTIAL_OFFSET, layers=8)
    report = check(captures, Options(plans=(PLAN,)))
    recorded = {o.index for r in report.plans[0].per_run for o in r.worst}
    target = next(i for i in range(1, 9) if i not in recorded)
    view = charts(report, captures, Selection(run=4, occurrence=target, kinds=("timeline",)))[
        0
    ].view
    assert isinstance(view, TimelineView)
    assert f"run 4 (warm) · occurrence {target} of 8" in view.title
    assert view.overlap_pct == pytest.approx(29_500 / 118_000)
    assert view.side_window is not None
    assert view.side_window[1] - view.side_window[0] == SIDE_LEN
    with pytest.raises(UsageError, match="no occurrence 9"):
        charts(report, captures, Selection(run=4, occurrence=9))


def test_without_plans_the_stream_timeline_is_drawn(tmp_path: Path) -> None:
    from overlap_check.report.plots.timeline import draw_timeline

    captures = runs(REAL_OFFSET, rank=0) + runs(FAKE_OFFSET, rank=1)
    report = check(captures, Options())
    chosen = charts(report, captures, Selection())
    assert [c.slug for c in chosen] == [
        "timeline-streams-rank0",
        "timeline-streams-rank1",
        "runs",
        "demand-streams-rank0",
        "demand-streams-rank1",
    ]
    view = chosen[0].view
    assert isinstance(view, TimelineView) and view.side_window is None
    assert view.main_stream == 2 and view.side_stream == 3
    # Per layer the side ops (28 µs each, every 30 µs from s) meet the GroupedMatmul
    # from s + 4: (28 - 4) + 28 + 28 + 28 = 108 µs; the view is the whole 6-layer capture.
    width = view.end_ns - view.start_ns
    share = f"{6 * 108 * US / width:.0%}"
    assert f"≥ 2 streams busy: 648 µs ({share})" in texts(draw_timeline(view))
    fake_labels = texts(draw_timeline(chosen[1].view))  # type: ignore[arg-type]
    assert "no time with ≥ 2 streams busy" in fake_labels
    for path in write_plots(report, captures, tmp_path / "streams.png"):
        assert_png(path)


def test_hundreds_of_kernels_draw_as_one_collection_with_few_labels() -> None:
    from matplotlib.collections import PolyCollection

    from overlap_check.report.plots.timeline import CHAR_WIDTH_PT, draw_timeline

    n = 3_000  # 1 µs kernels back to back, one 400 µs kernel in the middle
    rows = [kernel("aclnnAdd_AddAiCore_Add", 2 + i % 2, T0 + i * US, US) for i in range(n)]
    rows.append(kernel("aclnnGroupedMatmul_G_G", 4, T0 + 1_000 * US, 400 * US))
    table = conform(pl.DataFrame(rows))
    view = TimelineView(
        kernels=table, start_ns=T0, end_ns=T0 + n * US, title="dense", main_stream=2
    )
    figure = draw_timeline(view)
    ax = figure.axes[0]
    bars = [
        c for c in ax.collections if isinstance(c, PolyCollection) and len(c.get_paths()) == n + 1
    ]
    assert len(bars) == 1  # every kernel in one artist
    labels = [t.get_text() for t in ax.texts]
    assert "GroupedMatmul" in labels and "Add" not in labels  # 1 µs bars are too narrow
    # Labels are bounded by the width: every label needs its characters plus 4 pt.
    width_pt = ax.get_position().width * figure.get_figwidth() * 72
    assert len(ax.texts) <= width_pt / (3 * CHAR_WIDTH_PT + 4)


def test_edge_cases_still_draw(tmp_path: Path) -> None:
    from overlap_check.report.plots import canvas
    from overlap_check.report.plots.demand import draw_demand
    from overlap_check.report.plots.runs import draw_runs
    from overlap_check.report.plots.select import demand_view, runs_view
    from overlap_check.report.plots.timeline import draw_timeline

    table = capture(FAKE_OFFSET, layers=1).kernels
    # No kernels in range, no device cores, an occurrence without a dominator.
    empty = TimelineView(
        kernels=table,
        start_ns=T0,
        end_ns=T0 + 1_000,
        title="empty",
        main_stream=2,
        side_window=(T0, T0 + 500),
        side_stream=3,
    )
    assert "no kernels in this range" in texts(draw_timeline(empty))
    assert any("no dominator operators" in t for t in texts(draw_timeline(empty)))
    demand = demand_view(empty, None)
    labels = texts(draw_demand(demand))
    assert any("device cores unknown" in t for t in labels)
    assert any(t.startswith("no blocks demanded") for t in labels)
    # A barrier outside the view is not drawn; one on a stream not in view is skipped.
    far = BarrierCandidate(
        name="Cast",
        stream_id=2,
        start_ns=T0 - 10**9,
        gap_ns=1,
        run=1,
        occurrence=1,
        after_side_end_ns=1,
    )
    off_lane = replace(far, stream_id=9, start_ns=T0 + 100)
    drawn = draw_timeline(replace(empty, barriers=(far, off_lane)))
    assert not any("barrier?" in t for t in texts(drawn))
    # Runs chart: a run with no judged occurrence, and a report with nothing to chart.
    report = check(runs(FAKE_OFFSET, n=2), Options(plans=(PLAN,)))
    broken = replace(
        report.plans[0],
        per_run=(
            replace(report.plans[0].per_run[0], overlap_pct=None),
            *report.plans[0].per_run[1:],
        ),
    )
    figure = draw_runs(runs_view(replace(report, plans=(broken,)), [broken], Selection()))
    assert canvas.save(figure, tmp_path / "runs.png").stat().st_size > 10_000
    nothing = runs_view(replace(report, plans=(), stream_pairs=()), [], Selection())
    assert "no plan or stream pair to chart" in texts(draw_runs(nothing))


def test_a_plan_without_side_ops_shows_an_unjudged_occurrence(tmp_path: Path) -> None:
    captures = runs(FAKE_OFFSET, n=3)
    missing = Plan("ghost", side="NoSuchOp", dominator="GroupedMatmul", main_stream=2)
    report = check(captures, Options(plans=(missing,)))
    assert report.plans[0].verdict == "no-evidence"
    view = charts(report, captures, Selection(kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    # Only unjudged occurrences (a dominator without side ops): the first of a warm run.
    assert view.title.startswith("ghost · rank 0 · run 3 (warm) · occurrence 1 of 6")
    assert view.subtitle.startswith("first unjudged occurrence (no-side)")
    assert view.side_window is None and view.verdict == "no-evidence"
    assert_png(write_plots(report, captures, tmp_path / "ghost.png")[0])
    # Nothing matched at all: no occurrence to show, the run's streams instead.
    nothing = Plan("nothing", side="NoSuch", dominator="NoSuchEither", main_stream=2)
    report = check(captures, Options(plans=(nothing,)))
    view = charts(report, captures, Selection(kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    assert view.title == "nothing · rank 0 · run 3: no occurrence to show"
    assert "no compute kernel matched" in view.subtitle or report.plans[0].diagnosis == ""
    assert view.side_window is None and view.main_stream == 2


def test_bad_requests_are_usage_errors(tmp_path: Path, fake_report) -> None:  # type: ignore[no-untyped-def]
    report, captures = fake_report
    with pytest.raises(UsageError, match="picture format"):
        write_plots(report, captures, tmp_path / "x.jpg")
    with pytest.raises(UsageError, match="unknown chart kind"):
        write_plots(report, captures, tmp_path / "x.png", kinds=("pie",))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no run 9"):
        write_plots(report, captures, tmp_path / "x.png", run=9)
    streams_only = check(captures, Options())
    with pytest.raises(UsageError, match="no capture for run 9"):
        write_plots(streams_only, captures, tmp_path / "x.png", run=9)


def test_svg_output_is_reproducible(tmp_path: Path, fake_report) -> None:  # type: ignore[no-untyped-def]
    report, captures = fake_report
    first = write_plots(report, captures, tmp_path / "a.svg", kinds=("timeline",))[0]
    second = write_plots(report, captures, tmp_path / "b.svg", kinds=("timeline",))[0]
    assert first.read_bytes() == second.read_bytes()
    assert_svg(first)


# --------------------------------------------------------------------------- laziness


def test_analysing_never_imports_matplotlib() -> None:
    fixture = REPO / "fixtures" / "fake-dual-stream"
    assert fixture.is_dir(), "fixtures/ is missing: run `make fixtures`"
    code = f"""
import sys
import overlap_check.judge.pipeline
from overlap_check.model import Options, Plan
plan = Plan("moe", side="SharedExpert", dominator="GroupedMatmul")
report = overlap_check.judge.pipeline.check([{str(fixture)!r}], Options(plans=(plan,)))
assert report.plans[0].verdict == "fake", report.plans[0].verdict
import overlap_check.report.plots  # the package itself is cheap too
from overlap_check.cli import main
try:
    main(["analyze", {str(fixture)!r}, "--format", "json", "-q"])
except SystemExit as done:
    assert done.code == 1, done.code  # fake: the gate fails
assert "matplotlib" not in sys.modules, "matplotlib was imported"
print("ok", file=sys.stderr)
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().endswith("ok")
    assert '"verdict": "fail"' in done.stdout


def test_cli_help_does_not_import_matplotlib() -> None:
    code = (
        "import sys\n"
        "from overlap_check.cli import main\n"
        "try:\n    main(['plot', '--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'matplotlib' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "<stem>-<chart>" in done.stdout  # the help names the file scheme


def test_plot_pixels_are_not_blank(tmp_path: Path, fake_report) -> None:  # type: ignore[no-untyped-def]
    """The timeline really carries the palette's colours, not an empty canvas."""
    import matplotlib.image as mpimg

    report, captures = fake_report
    path = write_plots(report, captures, tmp_path / "t.png", kinds=("timeline",))[0]
    pixels = mpimg.imread(path)[..., :3]
    colours = {tuple(np.round(p * 255).astype(int)) for p in pixels.reshape(-1, 3)[::7]}
    assert (0xF2, 0x8E, 0x2B) in colours  # side operators
    assert (0x4E, 0x79, 0xA7) in colours  # dominator
    assert (0xE1, 0x57, 0x59) in colours  # barrier
    assert clip(captures[0].kernels, 0, 1).height == 0  # (clip: nothing before the epoch)


# --------------------------------------------------------------------------- command line


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture folders the CLI tests read, written by the project's generator."""
    from synth.fixtures import write_fixtures

    root = tmp_path_factory.mktemp("fixtures")
    write_fixtures(root, ("fake-dual-stream", "real-dual-stream", "two-rank-job", "not-split"))
    return root


PLAN_ARGS = [
    "--side",
    "SharedExpert",
    "--dominator",
    "GroupedMatmul",
    "--name",
    "moe-shared-expert",
    "--side-stream",
    "3",
    "--main-stream",
    "2",
]


def invoke(*args: str):  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from overlap_check.cli import cli

    return CliRunner().invoke(cli, list(args))


def test_cli_plot_writes_every_chart(tmp_path: Path, generated: Path) -> None:
    out = tmp_path / "fake.png"
    done = invoke("plot", str(generated / "fake-dual-stream"), *PLAN_ARGS, "-o", str(out))
    assert done.exit_code == 0, done.output
    names = ["fake.png", "fake-runs.png", "fake-demand-moe-shared-expert.png"]
    assert [f"overlap-check: wrote {tmp_path / n}" for n in names] == [
        line for line in done.stderr.splitlines() if line.startswith("overlap-check: wrote")
    ]
    assert done.stdout == ""  # pictures only; the report is analyze's job
    for name in names:
        assert_png(tmp_path / name)


def test_cli_plot_chooses_rank_run_occurrence_and_chart(tmp_path: Path, generated: Path) -> None:
    out = tmp_path / "r1.svg"
    done = invoke(
        "plot",
        str(generated / "two-rank-job"),
        *PLAN_ARGS,
        "--rank",
        "1",
        "--run",
        "4",
        "--occurrence",
        "2",
        "--chart",
        "timeline",
        "-o",
        str(out),
        "-q",
    )
    assert done.exit_code == 0, done.output
    assert done.stderr == "" and sorted(p.name for p in tmp_path.iterdir()) == ["r1.svg"]
    assert_svg(out)
    assert "run 4 (warm) · occurrence 2 of 2" in out.read_text(encoding="utf-8")


def test_cli_plot_bad_requests_exit_2(tmp_path: Path, generated: Path) -> None:
    fake = str(generated / "fake-dual-stream")
    done = invoke("plot", fake, *PLAN_ARGS, "-o", str(tmp_path / "x.pdf"))
    assert done.exit_code == 2 and "picture format" in done.stderr
    done = invoke("plot", fake, *PLAN_ARGS, "--run", "9", "-o", str(tmp_path / "x.png"))
    assert done.exit_code == 2 and "no run 9" in done.stderr
    done = invoke("plot", fake, "--format", "json")  # a report option plot does not take
    assert done.exit_code == 2 and "--format" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_analyze_plot_option_writes_the_pictures(tmp_path: Path, generated: Path) -> None:
    out = tmp_path / "real.png"
    done = invoke("analyze", str(generated / "real-dual-stream"), *PLAN_ARGS, "--plot", str(out))
    assert done.exit_code == 0, done.output
    assert f"wrote {out}" in done.stderr
    assert_png(out)
    assert (tmp_path / "real-runs.png").is_file()


def test_small_helpers_cover_their_ranges() -> None:
    from overlap_check.report.plots.canvas import TimeScale, exact_us, format_duration
    from overlap_check.report.plots.runs import spread

    assert [format_duration(x) for x in (850, 167_500, 1_107_000, 12_345_678)] == [
        "850 ns",
        "167.5 µs",
        "1.107 ms",
        "12.35 ms",
    ]
    # 1736408883704643212 ns as float64 µs would print ...643.250; the label is exact.
    assert exact_us(T0) == "1736408883704643.212" and exact_us(-1_500) == "-1.500"
    scales = [TimeScale(T0, T0 + w) for w in (19_999_999, 20_000_000, 20 * 10**9)]
    assert [(t.unit, t.span) for t in scales] == [("µs", 19_999.999), ("ms", 20.0), ("s", 20.0)]
    assert scales[1](np.array([T0 + 1_500_000])).tolist() == [1.5]  # 1.5 ms
    # Labels pushed up by 0.1 from 0.98 overflow the top (1.03) and shift back down.
    assert spread([0.98, 0.98, 0.5], gap=0.1, lo=0.0, hi=1.03) == pytest.approx(
        [1.03 - 0.1, 1.03, 0.5]
    )
    assert spread([0.2, 0.9], gap=0.1, lo=0.0, hi=1.0) == [0.2, 0.9]  # already apart
    table = capture(REAL_OFFSET, layers=1).kernels
    empty = table.clear()
    assert busiest_window(empty, 5_000) == (0, 5_000)
    assert stream_view_width(empty) == 1_000
    assert concurrent_segments(table, 0, 10)[0].size == 0  # nothing in range
    many = conform(pl.DataFrame([kernel("k", 2, i * 10, 5) for i in range(1_000)]))
    # 1000 kernels over 9995 ns: a range of 400 kernels is 9995 * 400 // 1000 ns.
    assert stream_view_width(many) == 9_995 * 400 // 1_000
    edges, levels = demand_steps(block_demand(table), "aicore", [2, 3, 99], T0, T0 + 10**9)
    assert levels[2].sum() == 0 and levels.shape == (3, edges.size - 1)


def test_stream_timeline_rank_choice_and_fallbacks(tmp_path: Path) -> None:
    captures = runs(REAL_OFFSET, rank=0, n=3) + runs(FAKE_OFFSET, rank=1, n=3)
    report = check(captures, Options())
    only = charts(report, captures, Selection(rank=1, kinds=("timeline", "runs")))
    assert [c.slug for c in only] == ["timeline-streams-rank1", "runs"]
    assert [s.label for s in only[1].view.panels[0].series] == ["rank 1"]  # type: ignore[union-attr]
    with pytest.raises(UsageError, match="no run of rank 5"):
        charts(report, captures, Selection(rank=5))
    # Captures whose paths the report does not list are matched by position in their rank.
    moved = [replace(c, path=f"elsewhere/{i}") for i, c in enumerate(captures)]
    view = charts(report, moved, Selection(rank=1, run=2, kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView) and view.kernels is moved[4].kernels
    # Without the per-rank summary the main stream comes from the stream pairs; with
    # every run cold, the first run is drawn.
    bare = replace(report, ranks=(), runs=tuple(replace(r, warm=False) for r in report.runs))
    view = charts(bare, captures, Selection(rank=0, kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    assert view.main_stream == 2 and "run 1 (cold)" in view.title
    with pytest.raises(UsageError, match="no run to draw"):
        charts(replace(report, runs=()), captures, Selection(kinds=("timeline",)))


def test_plan_without_regexes_colours_by_stream_and_dominator_name() -> None:
    from overlap_check.report.plots.timeline import kernel_roles

    captures = runs(FAKE_OFFSET, n=3)
    auto = Plan("auto", side_stream=3, main_stream=2)  # no regexes: longest main kernel
    report = check(captures, Options(plans=(auto,)))
    view = charts(report, captures, Selection(kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    assert view.side_pattern is None and view.dominator_pattern is None
    assert view.dominator_name == "aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul"
    rows = clip(view.kernels, view.start_ns, view.end_ns)
    roles = dict(zip(rows["name"].to_list(), kernel_roles(view, rows).to_list(), strict=True))
    assert roles["aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul"] == "dominator"
    assert roles["aclnnSharedExpertUp_SharedExpert_Matmul"] == "side"
    assert roles["hcom_allReduce__868_0_1"] == "communication"


def test_per_step_samples_name_the_step(tmp_path: Path) -> None:
    captures = [capture(FAKE_OFFSET, run=i, layers=6, steps=3) for i in (1, 2)]
    report = check(captures, Options(plans=(PLAN,), per="step"))
    samples = [r.sample for r in report.plans[0].per_run]
    assert samples[:3] == ["run 1 step 50", "run 1 step 51", "run 1 step 52"]
    view = charts(report, captures, Selection(run=2, occurrence=2, kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    # Occurrence 2 of the first step of run 2: layers are numbered within their step.
    assert view.title.startswith("moe-shared-expert · rank 0 · run 2 step 50 (warm)")
    assert "occurrence 2 of 2" in view.title
    assert view.overlap_pct == 0.0
    # The report names the barrier once (its first instance, run 1); this occurrence's own
    # Cast is marked: it starts 2 µs after this side window ends, 122 µs after the last Add.
    assert view.side_window is not None
    assert [
        (b.run, b.occurrence, b.start_ns - view.side_window[1], b.gap_ns) for b in view.barriers
    ] == [(2, 2, 2 * US, 122 * US)]
    runs_chart = charts(report, captures, Selection(kinds=("runs",)))[0].view
    points = runs_chart.panels[0].series[0].points  # type: ignore[union-attr]
    assert [(p.run, p.label, p.warm) for p in points] == [
        (1, "1·50", False),
        (2, "1·51", False),
        (3, "1·52", True),
        (4, "2·50", True),
        (5, "2·51", True),
        (6, "2·52", True),
    ]
    assert runs_chart.unit == "sample (run·step)"  # type: ignore[union-attr]
    # 12 layers in 2 steps: 6 occurrences per step, of which the report records 3; an
    # unrecorded one is measured within its own step.
    long = [capture(PARTIAL_OFFSET, run=i, layers=12, steps=2) for i in (1, 2, 3)]
    report = check(long, Options(plans=(PLAN,), per="step"))
    recorded = {o.index for r in report.plans[0].per_run if r.run == 3 for o in r.worst}
    missing = next(i for i in range(1, 7) if i not in recorded)
    views = charts(report, long, Selection(run=3, occurrence=missing, kinds=("timeline",)))
    # Not recorded in any step of run 3: drawn from its first step.
    assert f"run 3 step 50 (warm) · occurrence {missing} of 6" in views[0].view.title  # type: ignore[union-attr]
    assert views[0].view.overlap_pct == pytest.approx(29_500 / 118_000)  # type: ignore[union-attr]
    assert_png(write_plots(report, captures, tmp_path / "steps.png", kinds=("runs",))[0])


def test_defensive_paths_raise_or_fall_back(tmp_path: Path, fake_report) -> None:  # type: ignore[no-untyped-def]
    from overlap_check.measure.occurrence import measure_occurrence

    report, captures = fake_report
    result = report.plans[0]
    with pytest.raises(UsageError, match="has no occurrence 99"):
        measure_occurrence(result, result.per_run[2], captures[2], 99)
    # An occurrence with neither window nor barrier: the run's busiest region is shown.
    blank = replace(
        result.per_run[2].worst[0],
        side_start_ns=None,
        side_end_ns=None,
        dom_start_ns=None,
        dom_end_ns=None,
    )
    runs_ = (*result.per_run[:2], replace(result.per_run[2], worst=(blank,)), *result.per_run[3:])
    odd = replace(report, plans=(replace(result, per_run=runs_, barrier_candidates=()),))
    view = charts(odd, captures, Selection(run=3, kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView) and view.side_window is None
    assert (view.start_ns, view.end_ns) == busiest_window(
        captures[2].kernels, stream_view_width(captures[2].kernels)
    )


def test_not_split_keeps_an_empty_side_lane(generated: Path) -> None:
    import overlap_check
    from overlap_check.report.plots.timeline import draw_timeline

    captures = overlap_check.load(generated / "not-split")
    report = check(captures, Options(plans=(PLAN,)))
    assert report.plans[0].verdict == "not-split"
    view = charts(report, captures, Selection(kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    assert report.plans[0].placement[0] in view.subtitle  # the placement evidence
    ax = draw_timeline(view).axes[0]
    lanes = [t.get_text() for t in ax.get_yticklabels()]
    assert lanes == [
        "side window",
        "dominator window",
        "overlap",
        "stream 2 (main)",
        "stream 3 (side)",
    ]
    rows = clip(view.kernels, view.start_ns, view.end_ns)
    assert rows.filter(pl.col("stream_id") == 3).height == 0  # the side lane is empty


# --------------------------------------------------------------------------- side kinds


def side_kind_timeline(folder: str, occurrence: int | None = None) -> TimelineView:
    """The timeline view of a communication or copy fixture's plan (its own answer)."""
    import overlap_check
    from synth.side_kinds import case

    answer = case(folder).answer
    plan = Plan(
        answer.plan,
        side=answer.side,
        side_stream=answer.side_stream,
        dominator=answer.dominator,
        side_kind=answer.side_kind,
    )
    captures = overlap_check.load(REPO / "fixtures" / folder)
    report = check(captures, Options(plans=(plan,)))
    view = charts(report, captures, Selection(occurrence=occurrence, kinds=("timeline",)))[0].view
    assert isinstance(view, TimelineView)
    return view


def side_task_bars(view: TimelineView) -> dict[str, list[float]]:
    """The drawn side-task rectangles: their widths (view units, µs here) per lane label."""
    from overlap_check.report.plots.timeline import SIDE_TASKS, draw_timeline

    ax = draw_timeline(view).axes[0]
    lanes = [t.get_text() for t in ax.get_yticklabels()]
    (tasks,) = [c for c in ax.collections if c.get_label() == SIDE_TASKS]
    assert tasks.get_hatch() == "//"  # told apart from the other bars
    found: dict[str, list[float]] = {}
    for path in tasks.get_paths():
        corners = path.vertices
        lane = lanes[round(float(corners[:, 1].mean()))]
        found.setdefault(lane, []).append(round(float(np.ptp(corners[:, 0])), 3))
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]  # type: ignore[union-attr]
    assert f"side {view.side_kind} tasks" in legend
    return found


def test_communication_plan_draws_its_side_tasks_on_the_communication_lane() -> None:
    pytest.importorskip("matplotlib")
    view = side_kind_timeline("afd-hidden")
    # Worst warm occurrence: all three layers alike, the first wins the tie. Layer 0
    # (µs from the layer start, synth/side_kinds.afd): attention [0, 300],
    # send [100, 320]; the view is their hull [0, 320] padded by 0.15 x 320 = 48 on each
    # side, [-48, 368]: layer 1's send at 600 + 100 = 700 is out of view. One side task,
    # on the communication lane (communication rows have no Stream ID), 220 µs wide.
    assert view.side_window is not None
    assert view.side_window[1] - view.side_window[0] == 220 * US
    assert (view.end_ns - view.start_ns) == (320 + 2 * 48) * US
    assert side_task_bars(view) == {"communication": [220.0]}
    # the deciding figure, as the report recorded it: 200 of the 220 µs under attention
    # 200 / 220 = 0.909, real
    assert "hidden_pct 0.909 (real; 200 µs of 220 µs communication under compute)" in (
        view.subtitle
    )


def test_copy_plan_draws_its_copies_on_the_copy_stream_lane() -> None:
    pytest.importorskip("matplotlib")
    view = side_kind_timeline("kv-offload-hidden")
    # Layer 0 (kv_offload(True)): attention [0, 300], copies [50, 250] and [500, 600] on
    # stream 5; side window [50, 600], hull with attention [0, 600], padded by 90: the
    # view [-90, 690] holds both copies and not layer 1's (from 700 + 50 = 750).
    assert view.side_window == (view.start_ns + 140 * US, view.start_ns + 690 * US)
    bars = side_task_bars(view)
    assert bars == {"stream 5 (side)": [200.0, 100.0]}
    # the copies are drawn once: no plain bar sits on the copy lane
    from overlap_check.report.plots.timeline import SIDE_TASKS, draw_timeline

    ax = draw_timeline(view).axes[0]
    lane = [t.get_text() for t in ax.get_yticklabels()].index("stream 5 (side)")
    plain = [c for c in ax.collections if c.get_label() != SIDE_TASKS and c.get_zorder() == 3]
    centres = [round(float(p.vertices[:, 1].mean())) for c in plain for p in c.get_paths()]
    assert lane not in centres
    # (200 + 60) of (200 + 100) µs of copy under compute
    # 260 / 300 = 0.867, real
    assert "hidden_pct 0.867 (real; 260 µs of 300 µs copy under compute)" in view.subtitle


def test_an_occurrence_of_a_communication_plan_is_measured_with_its_tasks() -> None:
    import overlap_check
    from overlap_check.measure.occurrence import measure_occurrence

    captures = overlap_check.load(REPO / "fixtures" / "afd-hidden")
    plan = Plan("afd-send", side="hcom_send", side_kind="communication")
    result = check(captures, Options(plans=(plan,))).plans[0]
    (plan_run,) = result.per_run
    recorded = {o.index: o for o in plan_run.worst}
    windows = ("side_ops", "side_start_ns", "side_end_ns", "dom_start_ns", "dom_end_ns")
    for index in (1, 2, 3):  # measured again from the capture, its windows read as the report's
        measured = measure_occurrence(result, plan_run, captures[0], index)
        for field in (*windows, "overlap_ns", "overlap_pct", "dominator", "status"):
            assert getattr(measured, field) == getattr(recorded[index], field), field
        assert measured.side_ops == 1  # one send a layer, [100, 320] µs from its start
        assert (measured.side_start_ns or 0) - (measured.dom_start_ns or 0) == 100 * US
        assert (measured.side_end_ns or 0) - (measured.side_start_ns or 0) == 220 * US


def test_a_replotted_occurrence_takes_its_side_ops_as_the_report_did() -> None:
    # A plan given without side_stream whose side ops run on streams 3 and 4: the report
    # takes every match off the main stream (2 side ops a layer) and leaves the main
    # stream's own SharedExpert out. The plot's re-measurement of an occurrence must read
    # the same ops, not only those of the one side stream the result names.
    from overlap_check.measure.occurrence import measurer

    rows: list[dict[str, object]] = []
    for i in range(4):
        t = T0 + i * 1_000 * US
        rows.append(kernel("aclnnGroupedMatmul_GroupedMatmul", 2, t + 100 * US, 300 * US))
        rows.append(kernel(SIDE_NAMES[0], 3, t + 150 * US, 50 * US))
        rows.append(kernel(SIDE_NAMES[2], 4, t + 210 * US, 50 * US))
        rows.append(kernel(SIDE_NAMES[1], 2, t + 500 * US, 50 * US))  # main work, same name
    capture = Capture(
        path="synthetic/two-side-streams",
        source="kernel_details.csv",
        rank=0,
        device=0,
        level="Level1",
        capture_time_ns=T0,
        kernels=conform(pl.DataFrame(rows)),
        device_cores=DEVICE,
    )
    plan = Plan("se", side="SharedExpert", dominator="GroupedMatmul")
    result = check([capture], Options(plans=(plan,))).plans[0]
    (plan_run,) = result.per_run
    measure = measurer((plan,))
    for recorded in plan_run.worst:
        # side window [150, 260] µs from the layer's start, all under the dominator
        # [100, 400]: 260 - 150 = 110 µs
        assert (recorded.side_ops, recorded.overlap_ns) == (2, 110 * US)
        measured = measure(result, plan_run, capture, recorded.index)
        for field in ("side_ops", "side_start_ns", "side_end_ns", "overlap_ns", "status"):
            assert getattr(measured, field) == getattr(recorded, field), field
