"""The words of the text report that need explaining, each explained once at its end."""

from __future__ import annotations

import re

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
    "wall": "elapsed time, first start to last end (of a layer or a step)",
    "contention": "main + side block demand above the device's cores at the same instant",
    "judged/occ": "occurrences judged / occurrences found",
}


def terms(report_text: str) -> str:
    """The "Terms" section (after a blank line) of the terms ``report_text`` uses; "": none."""
    used = [(t, m) for t, m in TERMS.items() if re.search(rf"\b{re.escape(t)}\b", report_text)]
    return "".join(["\nTerms:\n", *[f"  {t}: {m}\n" for t, m in used]]) if used else ""
