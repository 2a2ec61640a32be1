"""Picture file names (no matplotlib here, so options can be checked before any work)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from overlap_check.model.errors import UsageError

SUFFIXES = (".png", ".svg")


def picture_format(path: Path) -> str:
    """``png`` or ``svg`` from the file name, or a UsageError naming the file."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UsageError(
            f"cannot tell the picture format from {path.name!r}",
            path=path,
            hint="name the file *.png or *.svg",
        )
    return suffix[1:]


def output_paths(path: Path, slugs: Sequence[str]) -> list[Path]:
    """The file of each chart: the first is ``path``, the others ``<stem>-<slug><suffix>``.

    Repeated slugs (two plan names that differ only in punctuation) get ``-2``, ``-3``.
    """
    paths: list[Path] = []
    seen: dict[str, int] = {}
    for i, slug in enumerate(slugs):
        if i == 0:
            paths.append(path)
            continue
        seen[slug] = seen.get(slug, 0) + 1
        unique = slug if seen[slug] == 1 else f"{slug}-{seen[slug]}"
        paths.append(path.with_name(f"{path.stem}-{unique}{path.suffix}"))
    return paths
