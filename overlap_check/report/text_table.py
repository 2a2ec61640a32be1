"""Aligned plain-text tables for the text report, with optional colour per column."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

Painter = Callable[[str], str]  # a cell's text -> the same text, maybe wrapped in ANSI escapes


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    indent: str = "  ",
    paint: Mapping[int, Painter] | None = None,
) -> list[str]:
    """Header and rows, columns padded to their widest cell, trailing blanks dropped.

    ``paint`` maps a column index to a painter for its body cells; the padding is
    added outside the escapes, so coloured and plain tables line up the same.
    """
    painters = paint or {}
    widths = [max(len(c) for c in column) for column in zip(header, *rows, strict=True)]
    lines = [(indent + "  ".join(c.ljust(w) for c, w in zip(header, widths, strict=True))).rstrip()]
    for row in rows:
        cells = [
            (painters[i](c) if i in painters else c) + " " * (w - len(c))
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines
