"""What the linter reports: one finding per mistake, and the result of a run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from overlap_check.lint.paths import PathInfo


@dataclass(frozen=True, order=True)
class Finding:
    """One mistake at one place. ``line`` and ``col`` are 1-based (as editors show them)."""

    path: str
    line: int
    col: int
    rule: str
    message: str
    hint: str

    def to_dict(self) -> dict[str, str | int]:
        return {
            "rule": self.rule,
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "message": self.message,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class LintResult:
    """The findings of one `lint` run, sorted by file, line, column and rule.

    ``files`` lists every file that was checked (clean ones too, for JUnit);
    ``paths`` says which execution path each file was judged under.
    """

    findings: tuple[Finding, ...]
    files: tuple[str, ...]
    paths: dict[str, PathInfo] = field(default_factory=dict)
    suppressed: int = 0

    @property
    def exit_code(self) -> int:
        return 1 if self.findings else 0

    def by_rule(self) -> dict[str, int]:
        return dict(sorted(Counter(f.rule for f in self.findings).items()))

    def summary(self) -> dict[str, object]:
        return {
            "files": len(self.files),
            "findings": len(self.findings),
            "suppressed": self.suppressed,
            "by_rule": self.by_rule(),
        }
