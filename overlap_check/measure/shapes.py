"""Input Shapes of a plan's operators, and how they changed against a reference (docs/gain.md,
"Input Shapes: is it like-for-like?").

The readers add the ``input_shapes`` column only when :func:`wants_shapes`; per capture
:func:`shape_signature` keeps the distinct shapes of the plan's dominator and side operators
with their counts (never the rows), :func:`shape_changes` compares two."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import polars as pl

from overlap_check.model import Options, Plan, ShapeCount
from overlap_check.model.selection import dominator_expr, restricted_side_expr

SHAPES_COLUMN = "input_shapes"  # the normalised column (readers: OPTIONAL_KERNEL_COLUMNS)
SHOWN = 2  # distinct shapes named per operator and side in a change


def wants_shapes(options: Options) -> bool:
    """Whether the readers should add the Input Shapes column: with a reference, for the
    captures compared and for the reference itself (judged with ``inline_side``)."""
    return options.reference is not None or options.inline_side


def shape_signature(kernels: pl.DataFrame, plan: Plan) -> tuple[ShapeCount, ...] | None:
    """The distinct Input Shapes of the plan's dominator and side operators, counted per
    (role, operator type); None when the table has no Input Shapes column or none of these
    operators has a shape (a row without one counts as ``N/A`` among others that do)."""
    if SHAPES_COLUMN not in kernels.columns or plan.side_kind != "compute":
        return None
    by_regex = plan.side is not None or plan.op_type is not None
    side = restricted_side_expr(
        plan.side, None if by_regex else plan.side_stream, plan.op_type, kernels
    )
    dominator = dominator_expr(plan, kernels) & ~side
    label = pl.coalesce(pl.col("op_type"), pl.col("name"))
    chosen_rows = kernels.filter(dominator | side)
    if chosen_rows[SHAPES_COLUMN].null_count() == chosen_rows.height:
        return None
    found: list[ShapeCount] = []
    for role, chosen in (("dominator", dominator), ("side", side)):
        counts = (
            kernels.filter(chosen)
            .select(
                label.alias("label"),
                # the readers' normalised text (readers.kernel_csv.input_shapes_text)
                pl.col(SHAPES_COLUMN).fill_null("N/A").alias("shapes"),
            )
            .group_by("label", "shapes")
            .len()
            .sort("label", "len", "shapes", descending=[False, True, False])
        )
        found += [
            ShapeCount(role, lab, shapes, int(n))  # type: ignore[arg-type]
            for lab, shapes, n in counts.iter_rows()
        ]
    return tuple(found)


def warm_signature(
    signatures: Sequence[tuple[ShapeCount, ...] | None],
) -> tuple[ShapeCount, ...] | None:
    """The signatures of a plan's warm captures added up (None: one of them had none)."""
    if not signatures or any(s is None for s in signatures):
        return None
    total: Counter[tuple[str, str, str]] = Counter()
    for signature in signatures:
        for c in signature or ():
            total[(c.role, c.label, c.shapes)] += c.count
    return tuple(
        ShapeCount(role, label, shapes, n)  # type: ignore[arg-type]
        for (role, label, shapes), n in sorted(total.items(), key=lambda kv: (kv[0][:2], -kv[1]))
    )


def _by_operator(signature: Sequence[ShapeCount]) -> dict[tuple[str, str], list[ShapeCount]]:
    found: dict[tuple[str, str], list[ShapeCount]] = {}
    for c in signature:
        found.setdefault((c.role, c.label), []).append(c)
    return {k: sorted(v, key=lambda c: (-c.count, c.shapes)) for k, v in found.items()}


def _named(counts: Sequence[ShapeCount]) -> str:
    shown = " | ".join(c.shapes for c in counts[:SHOWN])
    more = len(counts) - SHOWN
    return shown + (f" (+{more} more)" if more > 0 else "")


def shape_changes(
    head: Sequence[ShapeCount] | None, reference: Sequence[ShapeCount] | None
) -> tuple[str, ...] | None:
    """One sentence per operator (dominator first, then side ops) whose distinct Input
    Shapes differ between the capture and the reference, most frequent shape first;
    () when all match; None when either side has no signature (not available)."""
    if head is None or reference is None:
        return None
    after, before = _by_operator(head), _by_operator(reference)
    changes: list[str] = []
    for role, label in sorted(after.keys() & before.keys(), key=lambda k: (k[0] != "dominator", k)):
        now, then = after[(role, label)], before[(role, label)]
        if {c.shapes for c in now} != {c.shapes for c in then}:
            changes.append(
                f"{label} ({role}) input shapes differ: {_named(now)} vs {_named(then)} "
                "in the reference"
            )
    return tuple(changes)
