"""Issue 23: hidden means hidden from the main path; layers, occurrences and placement
true to what ran. Layouts from overlap_check/synth/main_path.py, written to disk and
read back through the public path; every answer below is computed here from the
construction (µs x 1000 relative to each layer's start), not read from the tool.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from measure_tables import stayed_off_side

from overlap_check import check
from overlap_check.cli import cli
from overlap_check.judge.pipeline import analyze_captures
from overlap_check.measure import layering
from overlap_check.measure.placement import stayed, stayed_phrases
from overlap_check.model import Capture, Options, Plan, PlanResult
from overlap_check.model.table import conform
from synth import main_path
from synth.expected import Built


def judged(tmp_path: Path, built: Built, *plans: Plan) -> tuple[PlanResult, ...]:
    built.write(tmp_path)
    return check([tmp_path], Options(plans=plans), workers=1).plans


def test_three_streams_hiding_only_each_other_are_fake_and_named(tmp_path: Path) -> None:
    # indexer / prolog recipe, three streams. Per layer the q path on stream 3 runs
    # [41, 124] (83 µs) and the weights on stream 4 [42, 122] (80 µs); the main stream ran
    # RmsNorm [0, 40] and waits until the indexer [125, 425]. Under the main path: 0 µs of
    # either; before issue 23 80 / 83 = 0.964 of the q path counted as hidden (real).
    q, weights = judged(
        tmp_path,
        main_path.indexer_three_streams(),
        Plan("q", side_stream=3, dominator="LightningIndexer", main_stream=2),
        Plan("weights", side_stream=4, dominator="LightningIndexer", main_stream=2),
    )
    for plan, busy in ((q, 124_000 - 41_000), (weights, 122_000 - 42_000)):
        assert (plan.hidden_pct, plan.verdict) == (0 / busy, "fake")
        assert plan.verdict_counts == (0, 0, 3)
        layer = plan.per_run[0].layers[0]
        assert (layer.side_busy_ns, layer.hidden_ns) == (busy, 0)
        # the recipes' window figure stays: side window [41, 124] before [125, 425]
        assert plan.overlap_pct == 0.0
    # the main stream idled through all 83 µs of the q path, 80 of the weights'
    assert (
        "streams 3 and 4 overlapped each other while the main stream idled: 83 µs of side time a "
        "layer (warm median) not hidden" in q.findings[0]
    )
    assert (
        "streams 3 and 4 overlapped each other while the main stream idled: 80 µs of side time a "
        "layer (warm median) not hidden" in weights.findings[0]
    )


def test_shared_expert_under_the_dispatch_all_to_all_is_hidden(tmp_path: Path) -> None:
    # MoE shared experts with EP: gate-up [30, 118] (88 µs) entirely under the dispatch
    # all-to-all [20, 120] (HCCL), down [122, 202] (80 µs) under the GroupedMatmul
    # [120, 320]: (88 + 80) / (88 + 80) = 1.0 hidden. Against compute alone it was
    # 80 / 168 = 0.476, partial.
    (plan,) = judged(
        tmp_path,
        main_path.shared_expert_under_dispatch(),
        Plan("se", side="SharedExpert", dominator="GroupedMatmul"),
    )
    assert (plan.hidden_pct, plan.verdict) == ((88_000 + 80_000) / (88_000 + 80_000), "real")
    layer = plan.per_run[0].layers[0]
    assert (layer.side_busy_ns, layer.hidden_ns) == (88_000 + 80_000, 88_000 + 80_000)
    # window [30, 202] against [120, 320]: 82 / min(172, 200), reported as before
    assert plan.overlap_pct == pytest.approx((202_000 - 120_000) / (202_000 - 30_000))
    assert plan.findings == ()


def test_siblings_alone_do_not_hide_but_the_main_stream_does(tmp_path: Path) -> None:
    # the same three streams, judged with the q path against the weights stream as its
    # "main" stream (--main-stream 4): then stream 4 is the main path and hides 80 of 83
    # µs (weights [42, 122] inside q [41, 124]); no sibling finding.
    (plan,) = judged(
        tmp_path,
        main_path.indexer_three_streams(),
        Plan("q", side_stream=3, main_stream=4),
    )
    assert plan.hidden_pct == pytest.approx(80_000 / 83_000)
    assert not any("overlapped each other" in finding for finding in plan.findings)


def test_touching_is_not_overlapping_and_does_not_move_layers() -> None:
    # dominators [100, 200) and [400, 500). [50, 100) ends where d0 starts, [200, 260)
    # starts where d0 ends, [350, 400) ends where d1 starts: none overlaps a dominator.
    # Between d0 and d1 the side work pauses 350 - 260 = 90, longer than 200 - 200 = 0
    # (the tail to d0) and 400 - 400 = 0 (the head to d1): each goes to the one it touches.
    got = layering.assign_layers([50, 200, 350], [100, 260, 400], [100, 400], [200, 500])
    assert got.tolist() == [0, 0, 1]
    # a gap without such a pause stays one burst: [250, 300) and [350, 380) together are
    # 50 after d0 and 20 before d1 (the pause, 50, is not longer than 50): both to d1
    got = layering.assign_layers([250, 350], [300, 380], [100, 400], [200, 500])
    assert got.tolist() == [1, 1]


def test_touching_layers_keep_their_tail_and_the_dominator_wait_is_seen(tmp_path: Path) -> None:
    # MoE shared experts, per 600 µs layer: RmsNorm [0, 40], gate-up [41, 91) on stream 3,
    # the GroupedMatmul [91, 391) starting where gate-up ends, down [391, 471) starting
    # where the GroupedMatmul ends, Add [473, 481).
    (plan,) = judged(
        tmp_path,
        main_path.touching_layers(),
        Plan("se", side="SharedExpert", dominator="GroupedMatmul"),
    )
    (run,) = plan.per_run
    for k, layer in enumerate(run.layers):
        t = k * 600_000
        assert (layer.side_ops, layer.layer) == (2, k + 1)
        origin = run.layers[0].side_start_ns
        assert origin is not None and layer.side_start_ns is not None
        assert layer.side_end_ns is not None and layer.dom_start_ns is not None
        assert layer.side_start_ns - origin == t  # the layer's own gate-up, not the last down
        assert layer.side_end_ns - layer.side_start_ns == 471_000 - 41_000
        assert layer.dom_start_ns - layer.side_start_ns == 91_000 - 41_000
        # busy 50 + 80 µs, none under the main path (RmsNorm ended at 40, Add starts 473)
        assert (layer.side_busy_ns, layer.hidden_ns) == (50_000 + 80_000, 0)
        # window [41, 471) holds [91, 391): 300 / min(430, 300)
        assert layer.overlap_pct == 300_000 / min(430_000, 300_000)
    assert (plan.verdict, plan.overlap_pct) == ("fake", 1.0)
    # the GroupedMatmul itself waited for gate-up: idle from RmsNorm's end (40) to 91
    (barrier,) = plan.barrier_candidates
    assert (barrier.chain, barrier.gap_ns, barrier.waited) == ("GroupedMatmul", 51_000, "main")
    assert barrier.occurrences == 3
    walls = plan.walls
    assert walls is not None
    # the main stream waited from the GroupedMatmul's end (391) to Add (473)
    assert walls.join_wait_ns == 473_000 - 391_000


def test_communication_plan_without_dominator_follows_the_main_stream_layers(
    tmp_path: Path,
) -> None:
    # prefill micro-batch dispatch / combine (two-batch overlap), no dominator named. Per
    # 700 µs layer: GroupedMatmul [0, 300) and [320, 620), the layers the main stream
    # repeats; dispatch [100, 340) starts in the first's layer [0, 320), combine
    # [330, 530) in the second's [320, 700). Dispatch: 200 µs under [0, 300) + 20 under
    # [320, 340) of 240; combine: 200 of 200. 3 layers x 2 occurrences.
    (plan,) = judged(
        tmp_path,
        main_path.two_batch_overlap(),
        Plan("tbo", side="hcom_alltoAllV", side_kind="communication"),
    )
    assert plan.verdict_counts == (6, 0, 0)
    assert plan.hidden_pct == pytest.approx(((200 + 20) / 240 + 200 / 200) / 2)
    (run,) = plan.per_run
    assert run.occurrences == 6
    assert [layer.side_busy_ns for layer in run.layers] == [240_000, 200_000] * 3
    assert [layer.hidden_ns for layer in run.layers] == [220_000, 200_000] * 3
    # no named dominator, no join: no join finding, no join wait or side tail
    assert plan.findings == ()
    assert not any(layer.join_not_waited for layer in run.layers)
    assert plan.walls is not None
    assert (plan.walls.join_wait_ns, plan.walls.side_tail_ns) == (None, None)


def test_communication_plan_without_layer_structure_has_one_occurrence_per_task() -> None:
    # AFD with no repeating main kernel: attention [0, 300) and a norm [400, 470) once
    # each; send 1 [100, 320) (200 of 220 µs under attention), send 2 [320, 420) (20 of
    # 100 under the norm). Each send is its own occurrence.
    t0 = 1_736_408_883_704_643_212
    rows = [
        ("attention", 2, 0, 300_000, False),
        ("norm", 2, 400_000, 470_000, False),
        ("hcom_send__1", None, 100_000, 320_000, True),
        ("hcom_send__2", None, 320_000, 420_000, True),
    ]
    frame = pl.DataFrame(
        {
            "name": [r[0] for r in rows],
            "stream_id": [r[1] for r in rows],
            "start_ns": [t0 + r[2] for r in rows],
            "end_ns": [t0 + r[3] for r in rows],
            "is_communication": [r[4] for r in rows],
        },
        schema_overrides={"stream_id": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
    )
    capture = Capture("run", "kernel_details.csv", 0, 0, "Level1", None, conform(frame))
    plan = Plan("afd", side="hcom_send", side_kind="communication")
    (result,) = analyze_captures([capture], Options(plans=(plan,))).plans
    (run,) = result.per_run
    assert run.occurrences == 2
    assert [layer.hidden_ns for layer in run.layers] == [200_000, 20_000]
    assert result.hidden_pct == pytest.approx((200 / 220 + 20 / 100) / 2)
    assert result.findings == ()


def test_a_shared_kernel_name_alone_is_no_evidence_of_stayed_side_work(tmp_path: Path) -> None:
    # MoE shared experts, eager names: per layer the main path's o_proj [0, 30) and router
    # [31, 41) are MatMulV3 like the shared expert's gate-up [100, 180) and down [202, 262)
    # on stream 3; its SwiGlu [181, 201) ran there too. Every shared-expert op moved: no
    # op is named as stayed (it was "MatMulV3 x6 on stream 2", the o_proj and router of 3
    # layers), and all (80 + 20 + 60) µs a layer ran under the GroupedMatmul [60, 360).
    (plan,) = judged(
        tmp_path,
        main_path.shared_matmul_names(),
        Plan("se", side="MatMulV3|SwiGlu", side_stream=3, dominator="GroupedMatmul"),
    )
    assert (plan.verdict, plan.stayed, plan.placement) == ("real", (), ())
    assert plan.hidden_pct == (80_000 + 20_000 + 60_000) / (80_000 + 20_000 + 60_000)
    assert "stayed off the side stream" not in plan.diagnosis


def test_stayed_side_work_is_named_where_a_layer_misses_it() -> None:
    # two layers, dominators [100, 200) and [600, 700). Layer 1: stream 3 ran two MatMulV3
    # and the main stream one (o_proj [0, 10)); layer 2: stream 3 ran one, the main stream
    # two (o_proj [500, 510) and the down projection [520, 530) that stayed). Layer 2 ran
    # 2 - 1 = 1 fewer MatMulV3 on stream 3 than layer 1: one of its main-stream MatMulV3
    # is named, min(2, 1) = 1; layer 1 misses none.
    k = conform(
        pl.DataFrame(
            {
                "name": ["MatMulV3", "GroupedMatmul", "MatMulV3", "MatMulV3"] * 2,
                "stream_id": [2, 2, 3, 3, 2, 2, 3, 2],
                "start_ns": [0, 100, 110, 130, 500, 600, 610, 520],
                "end_ns": [10, 200, 120, 140, 510, 700, 620, 530],
                "is_communication": [False] * 8,
            },
            schema_overrides={"stream_id": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
        )
    )
    got = stayed_off_side(k, "MatMulV3", None, side_stream=3, dominator="GroupedMatmul")
    assert stayed_phrases(got) == ["MatMulV3 x1 on stream 2"]


@pytest.mark.parametrize(
    "plan",
    [
        Plan("se", side_stream=3, dominator="GroupedMatmul"),
        Plan("se", side="MatMulV3|SwiGlu", side_stream=3, dominator="GroupedMatmul"),
        Plan("se", side="MatMulV3|SwiGlu", dominator="GroupedMatmul"),
    ],
    ids=["side_stream", "regex-and-stream", "regex"],
)
def test_reference_is_measured_like_the_capture(tmp_path: Path, plan: Plan) -> None:
    # MoE shared experts with the main path's o_proj and router named MatMulV3 like the
    # shared expert. The layer wall runs from one GroupedMatmul's start to the next's:
    # 600 µs a layer with the split (synth.main_path.names_multi_stream), 650 µs in the
    # single-stream reference: (600 - 650) / 650, whatever selects the side ops. (Before
    # issue 23: the side_stream plan took the reference layer for the GroupedMatmul alone,
    # 300 µs; the regex plan took o_proj [0, 30] for side work, a 581 µs layer.)
    multi, single = tmp_path / "multi", tmp_path / "single"
    main_path.names_multi_stream().write(multi)
    main_path.names_single_stream().write(single)
    options = Options(plans=(plan,), reference=str(single))
    report = check([multi], options, workers=1)
    assert report.reference is not None
    (delta,) = report.reference.plans
    assert (delta.before.layer_wall_ns, delta.after.layer_wall_ns) == (650_000, 600_000)
    assert delta.layer_wall_delta_pct == pytest.approx((600 - 650) / 650 * 100)
    # the join Add [421, 429) waited from the GroupedMatmul's end (360) for the side tail
    assert delta.after.join_wait_ns == 421_000 - 360_000
    if plan.side_stream is None:
        # the reference ran the shared expert inline after the GroupedMatmul: the main
        # stream was busy, not waiting; it idled 2 + 1 + 1 + 2 µs in the gaps between
        # [360, 362), [442, 443), [463, 464), [581, 583). New hole: 61 - 6 = 55 µs.
        assert delta.before.join_wait_ns == 2_000 + 1_000 + 1_000 + 2_000
        assert delta.new_join_wait_ns == 61_000 - 6_000
    else:  # stream 3 selects nothing in the reference: it waited for no side work
        assert delta.before.join_wait_ns is None
        assert delta.new_join_wait_ns == 61_000 - 0


def test_a_new_hole_after_the_join_fails_the_join_wait_gate() -> None:
    # fixtures/names-*: 61 µs of join wait against the reference's 6 µs of gaps in its
    # inline shared expert: 55 µs new, above --max-join-wait-us 30 (it was 61 - 223 µs,
    # the reference's inline side work taken for a wait, and the gate passed)
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    args = [
        "analyze",
        str(fixtures / "names-multi-stream"),
        "--reference",
        str(fixtures / "names-single-stream"),
        "--side",
        "MatMulV3|SwiGlu",
        "--dominator",
        "GroupedMatmul",
        "--max-join-wait-us",
        "30",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert (
        f"new join wait against the reference {61 - 6:.3f} µs per layer (median) above 30 µs"
        in result.output
    )


def test_module_scope_is_evidence_of_stayed_side_work() -> None:
    # a module: selection (MoE shared experts with module scope): per layer (2 layers)
    # its gate-up MatMulV3 moved to stream 3 and its down MatMulV3 stayed on stream 2,
    # alike in both layers. No layer misses a MatMulV3 on stream 3, but the scope says
    # the 2 on stream 2 are the module's: both are named.
    counts = pl.DataFrame(
        {
            "label": ["MatMulV3"] * 4,
            "stream_id": [3, 2, 3, 2],
            "layer": [0, 0, 1, 1],
            "count": [1, 1, 1, 1],
        }
    )
    off = pl.col("stream_id") != 3
    assert stayed_phrases(stayed(counts, off, scoped=True)) == ["MatMulV3 x2 on stream 2"]
    assert stayed_phrases(stayed(counts, off)) == []  # by a shared name: no evidence
