"""Tolerant JSONL reading with byte offsets.

Every line that parses is kept; a line that does not (truncated tail of a log still
being written, garbage, bad UTF-8) becomes a `LoadWarning` with its line number.
Offsets let a transcript be re-read later without re-parsing the file.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import orjson

from loaders.schema import LoadWarning

MAX_LINE_BYTES = 256 * 1024 * 1024  # a single record larger than this is skipped, not loaded
READ_BUFFER = 1 << 20  # lines of real logs outgrow the default 8 KB buffer, and readline then slows down ~4x


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 1-based
    offset: int
    length: int
    record: dict[str, Any]


def decode_line(raw: bytes) -> tuple[Any, str | None]:
    """(value, problem). Fast path orjson; falls back for NaN/Infinity and bad UTF-8."""
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        pass
    problem = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        problem = f"invalid UTF-8 at byte {exc.start}, replaced with U+FFFD"
    try:
        return json.loads(text), problem
    except ValueError as exc:
        return None, f"not JSON ({exc.msg} at column {exc.colno})"


def iter_lines(path: Path, warnings: list[LoadWarning], *, max_warnings: int = 50) -> Iterator[Line]:
    """Yield every parseable JSON-object line; record why any other line was skipped."""
    for number, start, length, value in scan_lines(path, warnings, None, max_warnings=max_warnings):
        yield Line(number, start, length, value)


FAST_PATH = True  # False forces every line through the careful path (tests prove both give the same result)

# raw line -> a dialect's digest of it; None or a msgspec.DecodeError hands the line to the careful path.
# Raising lets a dialect pass a msgspec decoder's own `decode`, so no Python frame runs per line.
FastDecoder = Callable[[bytes], Any]


def set_fast_path(enabled: bool) -> bool:
    """Switch the typed fast decoders on or off process-wide; returns the previous setting."""
    global FAST_PATH
    previous, FAST_PATH = FAST_PATH, enabled
    return previous


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a scan allocates ~10 objects a line: its full collections of a growing heap
    cost a fifth of a large ingest. Nothing a scan builds is cyclic garbage, so nothing is left uncollected.

    On the way out, the scan's survivors (a million objects for a 1 GB log) are moved to the oldest generation
    at once (freeze + unfreeze is two list splices) instead of by the young-generation pass the next allocation
    would run over all of them (~0.4 s). They are still examined by every later full collection; only a
    process that froze objects on purpose (gc.freeze before a fork) is left alone.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


def valid_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class CarefulLines:
    """The careful way to read one line: decode it (orjson, then json for NaN / bad UTF-8), or record why it was
    skipped. Shared by `scan_lines` and by a dialect's own read loop; `finish` adds the summary of skipped lines."""

    def __init__(self, path: Path, warnings: list[LoadWarning], max_warnings: int = 50) -> None:
        self.path = path
        self.warnings = warnings
        self.max_warnings = max_warnings
        self.skipped = 0

    def record(self, raw: bytes, number: int) -> dict[str, Any] | None:
        """The line's JSON object, or None (blank, or skipped with a warning)."""
        body = raw.strip()
        if not body:
            return None
        if len(raw) > MAX_LINE_BYTES:
            self._skip(number, f"line {number} skipped: {len(raw)} bytes is over the limit")
            return None
        value, problem = decode_line(body)
        if value is None and problem:
            truncated = not raw.endswith(b"\n")
            self._skip(number, f"line {number} skipped: {'truncated last line (log still being written?)' if truncated else problem}")
            return None
        if not isinstance(value, dict):
            self._skip(number, f"line {number} skipped: a JSON {type(value).__name__}, not an object")
            return None
        if problem:
            self.warnings.append(LoadWarning(code="bad_encoding", message=f"line {number}: {problem}", file=str(self.path), line=number))
        return value

    def _skip(self, number: int, message: str) -> None:
        self.skipped += 1
        if sum(1 for w in self.warnings if w.code == "skipped_line") < self.max_warnings:
            self.warnings.append(LoadWarning(code="skipped_line", message=message, file=str(self.path), line=number))

    def finish(self) -> None:
        if not self.skipped:
            return
        first = [w.line for w in self.warnings if w.code == "skipped_line"][:5]
        self.warnings.insert(0, LoadWarning(
            code="lines_skipped",
            message=f"{self.skipped} line{'s' if self.skipped != 1 else ''} skipped (first at line {', '.join(map(str, first))})",
            file=str(self.path), line=first[0] if first else None,
        ))


def scan_lines(path: Path, warnings: list[LoadWarning], fast: FastDecoder | None, *,
               max_warnings: int = 50) -> Iterator[tuple[int, int, int, Any]]:
    """(number, offset, length, item) per usable line, in file order.

    `item` is `fast(raw)` when a dialect's typed decoder accepts the line (valid UTF-8 only,
    as msgspec does not check the bytes of fields it skips: an encoding warning would be lost), else the whole record
    dict decoded the careful way, with the same warnings `iter_lines` has always given.
    """
    careful = CarefulLines(path, warnings, max_warnings)
    use_fast = fast is not None and FAST_PATH
    with path.open("rb", buffering=READ_BUFFER) as fh:
        offset = 0
        number = 0
        for raw in fh:
            number += 1
            length = len(raw)
            start = offset
            offset += length
            if use_fast and length <= MAX_LINE_BYTES and (raw.isascii() or valid_utf8(raw)):
                try:
                    item = fast(raw)  # type: ignore[misc]
                except msgspec.DecodeError:
                    item = None
                if item is not None:
                    yield number, start, length, item
                    continue
            value = careful.record(raw, number)
            if value is not None:
                yield number, start, length, value
    careful.finish()


def read_spans(path: Path, spans: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """Re-read only the given (offset, length) byte ranges: one transcript, not the file."""
    records: list[dict[str, Any]] = []
    with path.open("rb") as fh:
        for offset, length in spans:
            fh.seek(offset)
            value, _ = decode_line(fh.read(length).strip())
            if isinstance(value, dict):
                records.append(value)
    return records


def first_records(path: Path, limit: int = 20, max_bytes: int = 1 << 20) -> list[dict[str, Any]]:
    """The first few parseable objects, for cheap format detection."""
    out: list[dict[str, Any]] = []
    with path.open("rb") as fh:
        read = 0
        for raw in fh:
            read += len(raw)
            body = raw.strip()
            if body:
                value, _ = decode_line(body[:max_bytes] if len(body) > max_bytes else body)
                if isinstance(value, dict):
                    out.append(value)
                if len(out) >= limit:
                    break
            if read > max_bytes:
                break
    return out
