"""Damaged kernel_details.csv for negative tests (docs/formats.md).

Real files have shown a row with a field missing (the 2023 capture) and rows
concatenated from several op_summary slices (not globally sorted). A reader must
skip and count the short row, naming its line, and sort the rest by start.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from synth.layout import write_result_dir
from synth.model import Kernel, Scenario, Variant

TRUNCATED_NAME = "aclnnAdd_AddAiCore_Add"  # a main-stream op no plan window depends on


@dataclass(frozen=True)
class Malformed:
    result_dir: Path
    skipped_line: int  # 1-based line number (header = line 1) of the short row
    dropped: Kernel  # the kernel whose row lost a field
    kernels_left: int  # compute kernels a reader should still return


def _split_lines(raw: str) -> tuple[list[str], str]:
    eol = "\r\n" if "\r\n" in raw else "\n"
    return raw[: -len(eol)].split(eol), eol


def write_malformed(root: Path, scenario: Scenario, variant: Variant | None = None) -> Malformed:
    """Write ``scenario`` as a result dir, then damage its kernel_details.csv: the rows
    become two sorted slices concatenated out of order, and the first row named
    TRUNCATED_NAME loses its ``Type`` field."""
    chosen = variant or Variant()
    if chosen.level0 or not chosen.kernel_details:
        raise ValueError("malformed rows are written into a Level1+ kernel_details.csv")
    result = write_result_dir(scenario, root, chosen)
    path = result / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines, eol = _split_lines(path.read_text(encoding="utf-8"))
    header, data = lines[0], lines[1:]
    half = len(data) // 2
    data = data[half:] + data[:half]  # slice 2 written before slice 1
    columns = next(csv.reader([header]))
    name_at, type_at = columns.index("Name"), columns.index("Type")
    for index, line in enumerate(data):
        fields = next(csv.reader([line]))
        if fields[name_at] == TRUNCATED_NAME:
            del fields[type_at]
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator="").writerow(fields)
            data[index] = buffer.getvalue()
            start_text = fields[columns.index("Start Time(us)") - 1].strip().rstrip("\t")
            break
    else:
        raise ValueError(f"scenario has no {TRUNCATED_NAME} kernel to truncate")
    path.write_bytes((eol.join([header, *data]) + eol).encode())
    whole, frac = start_text.split(".")
    start_ns = int(whole) * 1000 + int(frac.ljust(3, "0"))
    dropped = next(
        k for k in scenario.kernels if k.name == TRUNCATED_NAME and k.start_ns == start_ns
    )
    return Malformed(result, index + 2, dropped, len(scenario.kernels) - 1)
