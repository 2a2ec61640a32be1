"""The Accelerator Core kinds: their codes, spellings, and which blocks each one counts; the
core rules, the contention sweep and the observed maxima all read kernels through them."""

from __future__ import annotations

import polars as pl

EXEMPT = ("AI_CPU", "DSA_SQE", "HCCL", "COMMUNICATION")

# The Accelerator Core of each kernel as a small code ("core", Int8). Upper-casing a
# million strings costs more than all the rest of a run's checks; a table holds a few
# distinct spellings, so each is normalised once and rows are only compared.
OTHER, AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV, EXEMPT_CORE = range(6)
_SPELLED = {
    AI_CORE: ("AI_CORE",),
    AI_VECTOR_CORE: ("AI_VECTOR_CORE",),
    MIX_AIC: ("MIX_AIC",),
    MIX_AIV: ("MIX_AIV",),
    EXEMPT_CORE: EXEMPT,
}
C = pl.col("core")
# Blocks compared with each kind's limit, and the column they come from.
AIC_BLOCKS = (
    pl.when(C.is_in([AI_CORE, MIX_AIC]))
    .then(pl.col("block_num"))
    .when(C == MIX_AIV)
    .then(pl.col("mix_block_num"))
)
AIV_BLOCKS = (
    pl.when(C.is_in([AI_VECTOR_CORE, MIX_AIV]))
    .then(pl.col("block_num"))
    .when(C == MIX_AIC)
    .then(pl.col("mix_block_num"))
)
# Contention demand: MIX_AIV's Mix Block Num is left out (its meaning is undocumented).
AIC_DEMAND = pl.when(C.is_in([AI_CORE, MIX_AIC])).then(pl.col("block_num"))
AIV_DEMAND = AIV_BLOCKS


def core_code(kernels: pl.DataFrame, *, strip: bool = True) -> pl.Expr:
    """The "core" column: ``accelerator_core`` stripped and upper-cased, as a kind code
    (OTHER for an unknown or missing core)."""
    distinct = kernels.get_column("accelerator_core").unique().drop_nulls()
    normal = (distinct.str.strip_chars() if strip else distinct).str.to_uppercase()
    raw = pl.col("accelerator_core")
    code = pl.lit(OTHER, pl.Int8)
    for kind, names in _SPELLED.items():
        spellings = distinct.filter(normal.is_in(list(names))).to_list()
        if spellings:
            hit = raw == spellings[0] if len(spellings) == 1 else raw.is_in(spellings)
            code = pl.when(hit).then(pl.lit(kind, pl.Int8)).otherwise(code)
    return code.alias("core")


def core_label(column: str = "core") -> pl.Expr:
    """A core kind code back as the Accelerator Core name ("" for OTHER and exempt)."""
    labels = {AI_CORE: "AI_CORE", AI_VECTOR_CORE: "AI_VECTOR_CORE", MIX_AIC: "MIX_AIC"}
    labels[MIX_AIV] = "MIX_AIV"
    return pl.col(column).replace_strict(
        list(labels), list(labels.values()), default="", return_dtype=pl.String
    )
