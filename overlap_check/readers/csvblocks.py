"""A CSV file as blocks of whole records, read with plain reads, parsed a few at a time.

Why: polars memory-maps a whole file, so a 328 MB kernel_details.csv costs 328 MB of
resident pages plus every parsed column. Fixed-size blocks read into one reused buffer
bound the memory to the output plus a few blocks. A block ends at a newline outside
quotes (an even count of ``"`` before it: polars' own rule), so a quoted newline is
never split; a record longer than a block grows the block."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

# Measured on the 328 MB, 1M-kernel bench file (2 cores): 6 MiB blocks (~18k rows)
# with 3 in parse at once came closest to the whole-file parse; larger blocks are
# no faster and hold more memory, smaller ones pay polars' ~1 ms per query.
BLOCK_BYTES = 6 << 20
# A record past this is no profiler row (csvread.MAX_FIELD_BYTES bounds its fields): the
# reader stops growing its buffer and lets the record-by-record path name the line.
MAX_RECORD_BYTES = 48 << 20


class RecordTooLong(ValueError):
    """A record longer than MAX_RECORD_BYTES."""


WORKERS = 3  # blocks parsed at once (polars releases the GIL while parsing)

_PIECE_BYTES = 1 << 20  # read and count quotes 1 MiB at a time
_QUOTE = ord('"')
_NEWLINE = b"\n"

S = TypeVar("S")
T = TypeVar("T")


class Readable(Protocol):
    """A binary file (``open(..., "rb")``, ``io.BytesIO``)."""

    def readinto(self, buffer: memoryview, /) -> int | None: ...


def _quotes(buffer: bytearray, start: int, stop: int, scratch: npt.NDArray[np.bool_]) -> int:
    """Quote characters in ``buffer[start:stop]`` (numpy over reused ``scratch``: 4x
    faster than ``bytearray.count``, no block-sized temporary per block)."""
    count = 0
    for at in range(start, max(start, stop), len(scratch)):
        size = min(len(scratch), stop - at)
        flags = scratch[:size]
        np.equal(np.frombuffer(buffer, np.uint8, size, at), _QUOTE, out=flags)
        count += int(np.count_nonzero(flags))
    return count


def record_end(
    buffer: bytearray,
    start: int,
    stop: int,
    *,
    last: bool,
    scratch: npt.NDArray[np.bool_] | None = None,
    quotes: int | None = None,
) -> int:
    """Index just past the last (``last``) or first newline outside quotes in
    ``buffer[start:stop]``, which begins at a record start; 0 when none. ``quotes``: the
    quote count of that range when known (only the tail is then counted again)."""
    if scratch is None:
        scratch = np.empty(_PIECE_BYTES, np.bool_)
    if last:
        newline = buffer.rfind(_NEWLINE, start, stop)
        if newline < 0:
            return 0
        if quotes is None:
            before = _quotes(buffer, start, newline, scratch)
        else:
            before = quotes - _quotes(buffer, newline, stop, scratch)
        while newline >= 0 and before % 2:
            previous = buffer.rfind(_NEWLINE, start, newline)
            if previous >= 0:
                before -= _quotes(buffer, previous, newline, scratch)
            newline = previous
    else:
        newline = buffer.find(_NEWLINE, start, stop)
        before = _quotes(buffer, start, newline, scratch) if newline >= 0 else 0
        while newline >= 0 and before % 2:
            following = buffer.find(_NEWLINE, newline + 1, stop)
            if following >= 0:
                before += _quotes(buffer, newline, following, scratch)
            newline = following
    return newline + 1 if newline >= 0 else 0


def record_blocks(
    handle: Readable, block_bytes: int | None = None, *, skip_first: bool = False
) -> Iterator[bytes]:
    """Consecutive blocks of whole records, about ``block_bytes`` each (``skip_first``: not
    the header). Each piece's quotes are counted as it is read, while still in cache."""
    buffer = bytearray(max(BLOCK_BYTES if block_bytes is None else block_bytes, 1))
    scratch = np.empty(_PIECE_BYTES, np.bool_)
    filled = 0
    quotes = 0  # quote characters in buffer[:filled]
    skipping = skip_first
    at_end = False
    while not at_end:
        if filled == len(buffer):  # one record longer than the buffer: grow
            if len(buffer) >= MAX_RECORD_BYTES:
                raise RecordTooLong(f"a record of more than {MAX_RECORD_BYTES} bytes")
            buffer.extend(bytes(len(buffer)))
        while filled < len(buffer):
            with memoryview(buffer) as view:
                read = handle.readinto(view[filled : filled + _PIECE_BYTES])
            if not read:
                at_end = True
                break
            quotes += _quotes(buffer, filled, filled + read, scratch)
            filled += read
        start = 0
        if skipping:
            start = record_end(buffer, 0, filled, last=False, scratch=scratch)
            if not start and not at_end:
                continue  # the header goes on past the buffer
            skipping = False
            start = start or filled  # a header with no newline: nothing follows
            quotes -= _quotes(buffer, 0, start, scratch)
        if at_end:
            cut = filled
        else:
            cut = record_end(buffer, start, filled, last=True, scratch=scratch, quotes=quotes)
        if cut > start:
            with memoryview(buffer) as view:
                yield bytes(view[start:cut])
        elif not at_end:
            cut = start  # no record end yet: keep it all and read more
        if cut:  # the unfinished record moves to the front
            quotes = _quotes(buffer, cut, filled, scratch)
            buffer[: filled - cut] = buffer[cut:filled]
            filled -= cut


def map_in_order(
    function: Callable[[S], T], blocks: Iterable[S], *, workers: int | None = None
) -> Generator[T, None, None]:
    """``function`` over ``blocks`` on ``workers`` threads, in block order, at most
    ``workers + 1`` read ahead; stopping early cancels the rest. One block: no threads."""
    workers = WORKERS if workers is None else workers
    rest = iter(blocks)
    head = list(islice(rest, 2))
    if len(head) < 2 or workers <= 1:
        yield from map(function, _drained(head, rest))
        return
    pending: deque[Future[T]] = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="csv-block") as pool:
        try:
            for block in _drained(head, rest):
                pending.append(pool.submit(function, block))
                del block  # the future holds it until it is parsed
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def _drained(head: list[S], rest: Iterator[S]) -> Iterator[S]:
    """``head``'s blocks, then ``rest``'s, keeping no reference to a block once given."""
    head.reverse()
    while head:
        yield head.pop()
    yield from rest
