"""Exact decimal text → integer nanoseconds, vectorised with polars.

Profiler times are µs decimals as text: a start time is a 16-digit Unix-epoch µs with 3
decimals (``"1736408883704643.212\\t"``): 19 significant digits, more than float64 holds
(``float("1736408883704643.213")`` is ``1736408883704643.25``). So text is parsed as a
decimal (polars' exact string → Decimal128 cast), scaled to ns, cast to Int64; no float.

Rounding, for text with more than 3 decimals (2023 files: ``496.8508`` µs =
496850.8 ns): **round half to even at the nanosecond** (``496.8505`` → 496850,
``496.8515`` → 496852). It is the rule of polars' decimal cast, of Python's
``decimal`` default context and of ``round()``, which the trace reader uses for
``dur`` floats, so all readers round alike. The result is off by at most 0.5 ns.
"""

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


def us_float_to_ns(values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Float µs (trace ``dur``) → int64 ns, ``round(dur * 1000)`` (half to even)."""
    return np.rint(np.asarray(values, dtype=np.float64) * 1000.0).astype(np.int64)


def ts_text(value: object) -> str | None:
    """A trace ``ts`` as decimal text: strings as they are, ints exactly, a float (not seen
    in Ascend files) as its shortest repr (the decimal the JSON writer meant); else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    return None
