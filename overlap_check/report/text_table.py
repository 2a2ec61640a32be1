"""Aligned plain-text tables, the text report fitted to the terminal's width and its terms
explained once at its end."""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

Painter = Callable[[str], str]  # a cell's text -> the same text, maybe wrapped in ANSI escapes
DEFAULT_WIDTH = 100
MIN_WIDTH = 40
# the width the report is fitted to while report.text renders it (text.render's ``width``)
WIDTH: ContextVar[int] = ContextVar("WIDTH", default=DEFAULT_WIDTH)
F = TypeVar("F", bound=Callable[..., str])


def terminal_width(environ: Mapping[str, str]) -> int:
    given = environ.get("COLUMNS", "").strip()
    return max(int(given), MIN_WIDTH) if given.isdigit() else DEFAULT_WIDTH


def _fit(columns: list[list[str]], indent: str) -> list[int] | None:
    """Column widths that fit WIDTH (no column under its longest word), else None."""
    fitted = [max(len(c) for c in column) for column in columns]
    words = [max(len(w) for cell in column for w in cell.split() or [""]) for column in columns]
    while (over := len(indent) + sum(fitted) + 2 * (len(fitted) - 1) - WIDTH.get()) > 0:
        can = [i for i, w in enumerate(fitted) if w > words[i]]
        if not can:
            return None
        widest = max(can, key=lambda i: fitted[i])
        fitted[widest] = max(words[widest], fitted[widest] - over)
    return fitted


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    indent: str = "  ",
    paint: Mapping[int, Painter] | None = None,
) -> list[str]:
    """Header and rows padded, wrapped to fit WIDTH or the last column under each row;
    ``paint``: a painter per column index for body cells, padding outside its escapes."""
    return [line for group in _groups(header, rows, indent, paint or {}) for line in group]


def _groups(
    header: Sequence[str], rows: Sequence[Sequence[str]], indent: str, paint: Mapping[int, Painter]
) -> list[list[str]]:
    columns = [list(column) for column in zip(header, *rows, strict=True)]
    widths = _fit(columns, indent)
    if widths is None and len(header) > 1:
        head, *body = _groups(header[:-1], [row[:-1] for row in rows], indent, paint)
        under = [[f"{indent}    {header[-1]}: {row[-1]}"] for row in rows]
        return [head] + [lines + more for lines, more in zip(body, under, strict=True)]
    widths = widths or [max(len(c) for c in column) for column in columns]
    groups: list[list[str]] = []
    for number, row in enumerate([header, *rows]):
        pieces = [textwrap.wrap(c, w, break_long_words=False) or [""] for c, w in
                  zip(row, widths, strict=True)]  # fmt: skip
        lines = []
        for depth in range(max(len(p) for p in pieces)):
            cells = []
            for i, (piece, w) in enumerate(zip(pieces, widths, strict=True)):
                text = piece[depth] if depth < len(piece) else ""
                shown = paint[i](text) if number and i in paint and text else text
                cells.append(shown + " " * (w - len(text)))
            lines.append((indent + "  ".join(cells)).rstrip())
        groups.append(lines)
    return groups


_LEAD = re.compile(r"^(\s*)(- )?")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # report/color.py's, which take no room


def wrap_lines(text: str, width: int) -> str:
    """Long lines wrapped at blanks with a hanging indent, a long word (a path) after ``/``."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(_ANSI.sub("", line)) <= width:
            out.append(line)
            continue
        lead = _LEAD.match(line)
        blanks, bullet = (lead.group(1), lead.group(2) or "") if lead else ("", "")
        hanging = blanks + ("  " if bullet else "    ")
        current, size = blanks, len(blanks)
        for word in line.split():
            seen = len(_ANSI.sub("", word))
            if size > len(blanks) and size + 1 + seen > width:
                out.append(current)
                current, size = hanging, len(hanging)
            elif size > len(blanks) and current != hanging:
                current, size = current + " ", size + 1
            while size + seen > width and (cut := word.rfind("/", 0, width - size)) > 0:
                out.append(current + word[: cut + 1])
                word, current, size = word[cut + 1 :], hanging, len(hanging)
                seen = len(_ANSI.sub("", word))
            current, size = current + word, size + seen
        out.append(current)
    return "\n".join(out)


def fitted(render: F) -> F:
    """A text renderer, its terms explained and fitted to ``width`` (keyword, default 100)."""

    @functools.wraps(render)
    def fitted_render(*args: Any, width: int | None = None, **kwargs: Any) -> str:
        width = width or DEFAULT_WIDTH
        token = WIDTH.set(width)
        try:
            body = render(*args, **kwargs)
            return wrap_lines(body + terms(body), width)
        finally:
            WIDTH.reset(token)

    return fitted_render  # type: ignore[return-value]


# term -> what it means; listed under "Terms" when the report uses the term
TERMS = {
    "dominator": "the main-stream operator the side work is meant to hide under (--dominator)",
    "occurrence": "one layer's side operators with the dominator they run beside",
    "side window": "from the first side operator's start to the last one's end, per occurrence",
    "cold": "the first --warmup runs (or steps), discarded; the warm ones are judged",
    "provisional": "judged on fewer runs than --min-runs, or on captures that lost rows (the "
    "PROVISIONAL line says which): not yet evidence",
    "barrier": "a main-stream operator that made one stream wait for the other",
    "join wait": "time the main stream waited for the side stream where they join",
    "side tail": "side work still running after the dominator ended",
    "wall": "elapsed compute time: a step's from its first start to its last end, a layer's "
    "from its dominator's start to the next layer's (docs/gain.md)",
    "contention": "main + side block demand above the device's cores at the same instant",
    "judged/occ": "occurrences judged / occurrences found",
    "deciding": "the warm occurrence with the lowest hidden_pct (its record is under the table)",
}


def terms(report_text: str) -> str:
    used = [(t, m) for t, m in TERMS.items() if re.search(rf"\b{re.escape(t)}\b", report_text)]
    return "".join(["\nTerms:\n", *[f"  {t}: {m}\n" for t, m in used]]) if used else ""
