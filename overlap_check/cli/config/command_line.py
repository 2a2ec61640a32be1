"""Values that only the command line gives: the one-off plan, and the --output format."""

from __future__ import annotations

from pathlib import Path

from overlap_check.cli.config.checks import validate_regex
from overlap_check.model import Plan, SideKind
from overlap_check.model.errors import UsageError
from overlap_check.report.output_file import format_of_suffix


def plan_from_cli(
    *,
    side: str | None,
    dominator: str | None,
    name: str | None = None,
    side_stream: int | None = None,
    main_stream: int | None = None,
    side_kind: SideKind | None = None,
    op_type: str | None = None,
) -> Plan | None:
    """The one-off plan of ``--side/--dominator/--name/--side-stream/--main-stream/--side-kind/
    --op-type``, None when none is given. Its default name (the side regex, or ``stream N``)
    is stable between runs, so that baselines line up."""
    if side is None and dominator is None and side_stream is None and op_type is None:
        if name is not None or main_stream is not None or side_kind is not None:
            raise UsageError(
                "--name/--main-stream/--side-kind describe a plan: give --side, --op-type "
                "or --side-stream"
            )
        return None
    if side is None and side_stream is None and op_type is None:
        raise UsageError("--dominator needs --side REGEX, --op-type REGEX or --side-stream N")
    for flag, pattern in (("--side", side), ("--op-type", op_type), ("--dominator", dominator)):
        if pattern is not None:
            validate_regex(pattern, key=flag)
    default_name = (
        side if side is not None else op_type if op_type is not None else f"stream {side_stream}"
    )
    return Plan(
        name=name or default_name,
        side=side,
        dominator=dominator,
        side_stream=side_stream,
        main_stream=main_stream,
        side_kind=side_kind or "compute",
        op_type=op_type,
    )


# The report formats a file can hold (github annotations go to stdout only).
FILE_FORMATS = ("json", "markdown", "junit", "text")


def format_for_path(path: str | Path) -> str:
    """The report format ``--output FILE`` writes, from the file's suffix."""
    found = format_of_suffix(path, FILE_FORMATS)
    if found is None:
        suffix = Path(path).suffix.lower()
        raise UsageError(
            f"--output {path}: cannot tell the report format from the suffix {suffix!r}",
            hint="use .json, .md, .xml (JUnit) or .txt",
        )
    return found
