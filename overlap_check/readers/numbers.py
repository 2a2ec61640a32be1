"""Exact decimal text → integer nanoseconds, vectorised with polars.

A 16-digit epoch µs with 3 decimals needs 19 significant digits, more than float64
holds, so text is cast to a decimal, scaled to ns and cast to Int64; more decimals
round half to even at the ns, as ``round()`` does (docs/formats.md, "Values")."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

# 38 digits of which 3 decimals: up to 10**35 µs, far beyond any epoch; values
# that do not fit Int64 after scaling become null (and the row is skipped).
_US_DECIMAL = pl.Decimal(38, 3)

# Characters that surround time text in real files: the TAB msprof appends,
# CSV quotes that survived a double quoting, spaces.
_STRIP = ' \t"\r\n'


def us_text_to_ns(expr: pl.Expr) -> pl.Expr:
    """Decimal µs text (TAB/quotes/space tolerated) → Int64 ns; null when not a number."""
    return us_clean_text_to_ns(expr.str.strip_chars(_STRIP))


def us_clean_text_to_ns(expr: pl.Expr) -> pl.Expr:
    """Decimal µs text with nothing around the number → Int64 ns; null otherwise (the CSV
    fast path's cheap form; what it rejects is retried with :func:`us_text_to_ns`)."""
    return (expr.cast(_US_DECIMAL, strict=False) * 1000).cast(pl.Int64, strict=False)


def int_text(expr: pl.Expr) -> pl.Expr:
    """Integer text → Int64, else null (malformed unless :func:`is_na_text`)."""
    return expr.str.strip_chars(_STRIP).cast(pl.Int64, strict=False)


def is_na_text(expr: pl.Expr) -> pl.Expr:
    """The text means "no value": null, blank or ``N/A`` (any case)."""
    stripped = expr.str.strip_chars(_STRIP)
    return expr.is_null() | (stripped == "") | (stripped.str.to_uppercase() == "N/A")


def na_to_null(expr: pl.Expr) -> pl.Expr:
    """Text meaning "no value" (blank, ``N/A``) → null; other text unchanged."""
    return pl.when(is_na_text(expr)).then(None).otherwise(expr)


def us_float_to_ns(values: npt.ArrayLike) -> pl.Series:
    """Float µs (trace ``dur``) → Int64 ns, ``round(dur * 1000)`` (half to even); null where
    no int64 holds it (msgspec reads ``1e400`` as inf, ``1e17`` µs is past 2**63 ns)."""
    floats = pl.Series(np.rint(np.asarray(values, dtype=np.float64) * 1000.0))
    ns: pl.Series = floats.cast(pl.Int64, strict=False)
    return ns


def ts_text(value: object) -> str | None:
    """A trace ``ts`` as decimal text: strings as they are, ints exactly, a float (not seen
    in Ascend files) as its shortest repr (the decimal the JSON writer meant); else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    return None
