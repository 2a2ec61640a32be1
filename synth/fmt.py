"""Integer nanoseconds -> the microsecond text each profiler version writes.

All formatting is integer arithmetic on ns (never float formatting of an
epoch): ``us3(1736408883704643212) == "1736408883704643.212"``. Each function
has a polars-expression twin so that a million rows format without a Python loop.

Styles seen in real files (docs/formats.md):
- ``us3``: exactly 3 decimals (start times 2024+, 2026 durations ``4.800``)
- ``us6``: 6 decimals (2026 Wait Time ``857.200000``)
- ``us_repr``: trailing zeros dropped, at least one decimal (2025 ``6.28``, ``15.0``),
  i.e. Python's float repr of a value rounded to 3 decimals
- ``us_short``: trailing zeros and a bare dot dropped (2023 ``1695115378713661``)
"""

from __future__ import annotations

import polars as pl


def us3(ns: int) -> str:
    return f"{ns // 1000}.{ns % 1000:03d}"


def us6(ns: int) -> str:
    return f"{ns // 1000}.{ns % 1000:03d}000"


def us_repr(ns: int) -> str:
    frac = f"{ns % 1000:03d}".rstrip("0") or "0"
    return f"{ns // 1000}.{frac}"


def us_short(ns: int) -> str:
    frac = f"{ns % 1000:03d}".rstrip("0")
    return f"{ns // 1000}.{frac}" if frac else str(ns // 1000)


def _int_part(ns: pl.Expr) -> pl.Expr:
    return (ns // 1000).cast(pl.String)


def _frac3(ns: pl.Expr) -> pl.Expr:
    return (ns % 1000).cast(pl.String).str.zfill(3)


def us3_expr(ns: pl.Expr) -> pl.Expr:
    return pl.concat_str([_int_part(ns), pl.lit("."), _frac3(ns)])


def us6_expr(ns: pl.Expr) -> pl.Expr:
    return pl.concat_str([_int_part(ns), pl.lit("."), _frac3(ns), pl.lit("000")])


def us_repr_expr(ns: pl.Expr) -> pl.Expr:
    frac = _frac3(ns).str.strip_chars_end("0")
    frac = pl.when(frac == "").then(pl.lit("0")).otherwise(frac)
    return pl.concat_str([_int_part(ns), pl.lit("."), frac])


def us_short_expr(ns: pl.Expr) -> pl.Expr:
    frac = _frac3(ns).str.strip_chars_end("0")
    return (
        pl.when(frac == "")
        .then(_int_part(ns))
        .otherwise(pl.concat_str([_int_part(ns), pl.lit("."), frac]))
    )


def us_fine_expr(ns: pl.Expr, extra: pl.Expr) -> pl.Expr:
    """A trace ``dur``: 3 decimals plus a sub-ns tail (``53.7410625``), zeros dropped.

    ``extra`` holds digits such as ``"0625"`` (0.0625 ns); every tail used is below
    0.5 ns so ``round(dur * 1000)`` gives back the exact ns. Zero stays ``0``.
    """
    digits = pl.concat_str([_frac3(ns), extra]).str.strip_chars_end("0")
    digits = pl.when(digits == "").then(pl.lit("0")).otherwise(digits)
    text = pl.concat_str([_int_part(ns), pl.lit("."), digits])
    return pl.when(ns == 0).then(pl.lit("0")).otherwise(text)


def csv_quote_expr(text: pl.Expr) -> pl.Expr:
    """Python ``csv`` QUOTE_MINIMAL: quote fields holding a comma, quote or line break."""
    needs = text.str.contains(r'[,"\r\n]')
    quoted = pl.concat_str(
        [pl.lit('"'), text.str.replace_all('"', '""', literal=True), pl.lit('"')]
    )
    return pl.when(needs).then(quoted).otherwise(text)


def json_str_expr(text: pl.Expr) -> pl.Expr:
    """A JSON string literal (names are ASCII; escape backslash and quote)."""
    escaped = text.str.replace_all("\\", "\\\\", literal=True).str.replace_all(
        '"', '\\"', literal=True
    )
    return pl.concat_str([pl.lit('"'), escaped, pl.lit('"')])


def float_repr(value: float) -> str:
    """How Python (and so torch_npu's csv/json writers) prints a float."""
    return repr(float(value))
