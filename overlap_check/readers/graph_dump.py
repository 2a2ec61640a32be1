"""Configured core limits: GE's global ``aicore_num`` and per-operator limits from graph dumps.

The formats and the kernel-to-operator matching: docs/formats.md, "Core-related inputs"."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from overlap_check.model.errors import ConfigError, InputError

AICORE_ATTR = "_op_aicore_num"
MAX_CORES = 2**31 - 1  # a core count (or rank) past Int32 is none a device has
VECTORCORE_ATTR = "_op_vectorcore_num"

_ASSIGNMENT = re.compile(r"^\s*[\w.\[\]\"']*aicore_num[\"']?\]?\s*[=:]\s*(?P<value>.*?)\s*;?\s*$")
_AIC_AIV = re.compile(r"^\s*(?P<aic>\d+)\s*(?:\|\s*(?P<aiv>\d*)\s*)?$")


def parse_aicore_num(
    text: str, *, key: str = "device.ge_aicore_num", path: str | None = None
) -> tuple[int, int | None]:
    """``"aic|aiv"`` -> (aic, aiv), ``"aic|"`` / ``"aic"`` -> (aic, None); else ConfigError."""
    value = text.strip()
    value = assigned.group("value") if (assigned := _ASSIGNMENT.match(value)) else value
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    parsed = _AIC_AIV.match(value)
    if parsed is None:
        raise ConfigError(
            f'{text!r} is not "aic|aiv"',
            path=path,
            key=key,
            hint='write the AI Core and AI Vector core counts separated by "|", e.g. "24|48"',
        )
    aic, aiv_text = int(parsed.group("aic")), parsed.group("aiv")
    aiv = int(aiv_text) if aiv_text else None
    if not 0 < aic <= MAX_CORES or (aiv is not None and not 0 < aiv <= MAX_CORES):
        raise ConfigError(
            f"{text!r}: core counts must be between 1 and {MAX_CORES}", path=path, key=key
        )
    return aic, aiv


_TOKEN = re.compile(
    r"""(?P<skip>\s+|\#[^\n]*)
      |(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
      |(?P<open>[{<])
      |(?P<close>[}>])
      |(?P<punct>[:,;\[\]])
      |(?P<word>[^\s{}<>:,;\[\]"'\#]+)""",
    re.VERBOSE,
)

Field = tuple[str, "str | Message"]
Message = list[Field]


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _unquote(token: str) -> str:
    body = token[1:-1]
    if "\\" not in body:
        return body
    raw = codecs.escape_decode(body.encode("utf-8"))[0]
    return bytes(raw).decode("utf-8", errors="replace")


def parse_text_proto(text: str, *, path: str | Path) -> Message:
    """Protobuf text format as nested ``[(field, value | Message), ...]`` lists; schema-less:
    enough for GE graph dumps (names, types, string / int attrs)."""
    root: Message = []
    stack: list[tuple[Message, int]] = [(root, 0)]  # open messages and where they opened
    name: str | None = None
    in_list = False
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() != pos:
            break
        pos = match.end()
        kind, token = match.lastgroup, match.group()
        if kind == "skip":
            continue
        if kind in ("word", "str"):
            if name is None:
                if kind == "str":
                    raise InputError(
                        f"unexpected string {token[:40]}", path=path, line=_line_at(text, pos)
                    )
                name = token
            else:
                stack[-1][0].append((name, _unquote(token) if kind == "str" else token))
                if not in_list:
                    name = None
        elif kind == "open":
            if name is None:
                raise InputError("'{' without a field name", path=path, line=_line_at(text, pos))
            child: Message = []
            stack[-1][0].append((name, child))
            stack.append((child, match.start()))
            name = None
        elif kind == "close":
            if len(stack) == 1 or name is not None:
                raise InputError(f"unexpected {token!r}", path=path, line=_line_at(text, pos))
            stack.pop()
        elif token == "[":
            in_list = True
        elif token == "]":
            in_list = False
            name = None
    if pos != len(text):
        raise InputError(f"unexpected character {text[pos]!r}", path=path, line=_line_at(text, pos))
    if len(stack) != 1:
        raise InputError("unclosed '{'", path=path, line=_line_at(text, stack[-1][1]))
    return root


def _scalar(message: Message, field: str) -> str | None:
    return next((v for name, v in message if name == field and isinstance(v, str)), None)


def _ops(tree: Message) -> list[Message]:
    """Every ``op { ... }`` message at any depth (graphs nest inside models and attrs)."""
    found: list[Message] = []
    pending = [tree]
    while pending:
        for name, value in pending.pop():
            if isinstance(value, str):
                continue
            if name == "op":
                found.append(value)
            pending.append(value)
    return found


_DUMP_NAME = re.compile(
    r"^dynamo_(?P<kind>original|optimized)_graph_(?P<graph>\d+)_rank_(?P<rank>\d+)"
    r"_pid_\d+_ts_(?P<ts>\d+)\.(?:txt|pbtxt)$"
)
_RANK_IN_NAME = re.compile(r"_rank_(\d+)(?:_|\.)")

LIMIT_SCHEMA: dict[str, pl.DataType] = {
    **dict.fromkeys(("op_name", "op_type"), pl.String()),
    "rank": pl.Int32(),
    **dict.fromkeys(("aicore", "vectorcore"), pl.Int64()),
}


@dataclass(frozen=True)
class GraphDumpLimits:
    """Per-operator limits read from graph dumps: one row per (rank, operator)."""

    table: pl.DataFrame  # LIMIT_SCHEMA; rank null = every rank
    files: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _dump_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError("graph dump not found", path=path)
    files = [
        f
        for f in path.rglob("*")
        if f.is_file()
        and (
            f.suffix == ".pbtxt"
            or (f.suffix == ".txt" and f.name.startswith(("dynamo_", "ge_proto")))
        )
    ]
    if not files:
        raise InputError(
            "no graph dump (.txt / .pbtxt) in this folder",
            path=path,
            hint="torchair writes dynamo_{original|optimized}_graph_*_rank_*_pid_*_ts_*.txt",
        )

    def order(f: Path) -> tuple[int, int, str]:
        if (named := _DUMP_NAME.match(f.name)) is None:
            return (0, 0, str(f))
        return (int(named.group("kind") == "optimized"), int(named.group("ts")), str(f))

    return sorted(files, key=order)


def _attr_count(op: Message, key: str, *, path: Path) -> int | None:
    """The attribute as a count; "" and "0" mean no limit recorded (GE's default)."""
    for name, attr in op:
        if name != "attr" or isinstance(attr, str) or _scalar(attr, "key") != key:
            continue
        value = next((v for n, v in attr if n == "value" and not isinstance(v, str)), None)
        raw = None if value is None else (_scalar(value, "s") or _scalar(value, "i"))
        if raw is None or raw.strip() in ("", "0"):
            return None  # attribute present but no limit recorded
        try:
            count = int(raw.strip())
        except ValueError:
            count = -1
        if not 0 < count <= MAX_CORES:
            raise InputError(
                f"operator {_scalar(op, 'name')!r}: {key} is {raw!r}, not a core count "
                f"(a whole number from 1 to {MAX_CORES})",
                path=path,
            )
        return count
    return None


def _read_one(file: Path) -> list[tuple[object, ...]]:
    """(op_name, op_type, rank, aicore, vectorcore) of the operators with a limit."""
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise InputError(f"cannot read graph dump: {err.strerror}", path=file) from err
    ranked = _RANK_IN_NAME.search(file.name)
    rank = int(ranked.group(1)) if ranked else None
    if rank is not None and rank > MAX_CORES:
        raise InputError(f"rank {rank} in the file name is past 32 bits: not a rank", path=file)
    rows: list[tuple[object, ...]] = []
    for op in _ops(parse_text_proto(text, path=file)):  # operators, not kernels: small
        aicore = _attr_count(op, AICORE_ATTR, path=file)
        vectorcore = _attr_count(op, VECTORCORE_ATTR, path=file)
        op_name = _scalar(op, "name")
        if op_name and (aicore is not None or vectorcore is not None):
            rows.append((op_name, _scalar(op, "type"), rank, aicore, vectorcore))
    return rows


def read_graph_dump(path: str | Path) -> GraphDumpLimits:
    """Operators carrying ``_op_aicore_num`` / ``_op_vectorcore_num`` in a dump file or folder."""
    files = _dump_files(Path(path))
    rows = [(*row, order) for order, file in enumerate(files) for row in _read_one(file)]
    table = pl.DataFrame(rows, schema={**LIMIT_SCHEMA, "order": pl.Int64()}, orient="row")
    notes: list[str] = []
    conflicts = (
        table.group_by("rank", "op_name")
        .agg(pl.struct("aicore", "vectorcore").n_unique().alias("values"))
        .filter(pl.col("values") > 1)
    )
    if conflicts.height:
        names = ", ".join(conflicts.get_column("op_name").sort().head(5).to_list())
        notes.append(
            f"graph dump: {conflicts.height} operator(s) carry different limits in different "
            f"files ({names}); the optimized / latest file wins"
        )
    table = (
        table.sort("order")
        .unique(subset=["rank", "op_name"], keep="last", maintain_order=True)
        .drop("order")
    )
    return GraphDumpLimits(table=table, files=tuple(str(f) for f in files), notes=tuple(notes))


_DELIMITER = re.compile(r"[^A-Za-z0-9]")


def _contained_op(name: str, op_names: set[str]) -> str | None:
    """The leftmost, then longest, operator name inside ``name`` at non-alphanumeric bounds."""
    cuts = [m.start() for m in _DELIMITER.finditer(name)]
    starts = [0, *(c + 1 for c in cuts)]
    ends = [len(name), *reversed(cuts)]  # longest first
    for start in starts:
        for end in ends:
            if end > start and name[start:end] in op_names:
                return name[start:end]
    return None


def _name_to_op(kernel_names: pl.Series, op_names: list[str]) -> pl.DataFrame:
    """Kernel name -> dump operator name (exact, else contained at word boundaries)."""
    names = pl.DataFrame({"name": kernel_names.unique()})
    known = set(op_names)
    exact = names.filter(pl.col("name").is_in(known)).select(
        "name", pl.col("name").alias("op_name")
    )
    rest = names.filter(~pl.col("name").is_in(known)).get_column("name").drop_nulls().to_list()
    # One lookup pass per DISTINCT kernel name (hundreds to thousands), not per kernel.
    pairs = [(n, op) for n in rest if (op := _contained_op(n, known)) is not None]
    contained = pl.DataFrame(pairs, schema={"name": pl.String, "op_name": pl.String}, orient="row")
    return pl.concat([exact, contained])


def operator_limits_for(kernels: pl.DataFrame, dump: GraphDumpLimits) -> pl.DataFrame:
    """``kernels`` plus ``op_aicore``, ``op_vectorcore`` (Int64, null = none) and ``op_name``."""
    if dump.table.height == 0:
        return kernels.with_columns(
            pl.lit(None, pl.Int64).alias("op_aicore"),
            pl.lit(None, pl.Int64).alias("op_vectorcore"),
            pl.lit(None, pl.String).alias("op_name"),
        )
    mapping = _name_to_op(kernels.get_column("name"), dump.table.get_column("op_name").to_list())
    ranked = dump.table.filter(pl.col("rank").is_not_null()).select(
        "op_name", "rank", pl.col("aicore").alias("_r_aic"), pl.col("vectorcore").alias("_r_aiv")
    )
    anyrank = dump.table.filter(pl.col("rank").is_null()).select(
        "op_name", pl.col("aicore").alias("_u_aic"), pl.col("vectorcore").alias("_u_aiv")
    )
    joined = (
        kernels.join(mapping, on="name", how="left")
        .join(ranked, on=["op_name", "rank"], how="left")
        .join(anyrank, on="op_name", how="left")
    )
    matched = pl.coalesce("_r_aic", "_r_aiv", "_u_aic", "_u_aiv").is_not_null()
    return joined.with_columns(
        pl.coalesce("_r_aic", "_u_aic").alias("op_aicore"),
        pl.coalesce("_r_aiv", "_u_aiv").alias("op_vectorcore"),
        pl.when(matched).then(pl.col("op_name")).alias("op_name"),
    ).drop("_r_aic", "_r_aiv", "_u_aic", "_u_aiv")
