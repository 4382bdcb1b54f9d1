"""What one scan of a log file yields: run headers, rows, and where each transcript lives."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loaders.schema import LoadWarning, Run, SampleRow

Span = tuple[int, int]  # (byte offset, length) of one line in the file
TranscriptKey = tuple[str, int]  # (sample_id, attempt)


class RunIndex:
    """One run of a scanned log: its header, its rows, where each transcript's lines are, and its headline figures.

    A run read back from the parse cache gets `load_rows` instead of rows: they are read on first use, so a
    restarted server lists its runs (with `figures`, stored beside them) without reading 100k rows first.
    """

    def __init__(self, run: Run, rows: list[SampleRow] | None = None, spans: Mapping[TranscriptKey, list[Span]] | None = None,
                 *, load_rows: Callable[[], list[SampleRow]] | None = None, figures: dict[str, Any] | None = None) -> None:
        self.run = run
        self.spans: Mapping[TranscriptKey, list[Span]] = spans if spans is not None else {}
        self.figures = figures  # query.row_figures of the rows, when known
        self._rows = rows
        self._load_rows = load_rows
        self._lock = threading.Lock()

    @property
    def rows(self) -> list[SampleRow]:
        if self._rows is None:
            with self._lock:
                if self._rows is None:
                    self._rows = self._load_rows() if self._load_rows is not None else []
        return self._rows


@dataclass
class ScanContext:
    """Shared by a dialect's scan: where we are and what went wrong so far."""

    path: str
    source: str
    warnings: list[LoadWarning] = field(default_factory=list)

    def warn(self, code: str, message: str, line: int | None = None) -> None:
        self.warnings.append(LoadWarning(code=code, message=message, file=self.path, line=line))


def numeric_sort_key(sample_id: str) -> tuple[int, str]:
    """Order `x.dev.84` before `x.dev.100`: by the integer after the last `.`, `_`, `-` or `#`."""
    for sep in "_.":  # the usual ids (`task_12`, `x.dev.84`): ASCII digits after the last `_` or `.` hold no other separator
        _head, found, digits = sample_id.rpartition(sep)
        if found and digits.isdigit() and digits.isascii():
            return (int(digits), sample_id)
    tail = sample_id[max(sample_id.rfind("."), sample_id.rfind("_"), sample_id.rfind("-"), sample_id.rfind("#")) + 1:]
    try:
        return (int(tail), sample_id)
    except ValueError:
        return (1 << 62, sample_id)


def key_sharing_dict(values: dict[str, Any]) -> dict[str, Any]:
    """`values` as a dict whose copies share one key table, as instance dicts do: a 27-field row's dict is ~300
    bytes instead of ~830, allocated by pymalloc. It is an ordinary dict in every behaviour (a copy given a new
    key is handled by CPython as any instance dict is); only its memory differs."""
    holder = type("_KeyTable", (), {})()  # a class of its own: its cached key table is this one order of keys
    for name, value in values.items():
        setattr(holder, name, value)
    return holder.__dict__


_ROW_DEFAULTS: dict[str, Any] = key_sharing_dict(
    {name: f.get_default(call_default_factory=False) for name, f in SampleRow.model_fields.items()})
_FIELDS_SETS: dict[tuple[str, ...], set[str]] = {}
_object_new = object.__new__
_object_setattr = object.__setattr__


def row_values() -> dict[str, Any]:
    """Every SampleRow field at its default, in field order (repr follows it): fill in, then `new_row`."""
    data = _ROW_DEFAULTS.copy()
    data["metrics"] = {}
    return data


def fields_set(names: tuple[str, ...]) -> set[str]:
    """The shared `model_fields_set` of rows built from these names (a set is ~2 KB: one per call shape, not per row)."""
    found = _FIELDS_SETS.get(names)
    if found is None:
        found = _FIELDS_SETS[names] = set(names)
    return found


def new_row(data: dict[str, Any], names: set[str]) -> SampleRow:
    """A SampleRow around `data` (every field, already typed, from `row_values`), skipping pydantic's validation.

    Validation costs ~10 µs a row, keyword handling another ~3: together most of ingesting 100k rows. Scanners
    build every value with its exact type, and tests re-validate every fixture's rows to prove these rows equal
    validated ones. `names` (from `fields_set`) is what pydantic reports as explicitly set.
    """
    row = _object_new(SampleRow)
    _object_setattr(row, "__dict__", data)
    _object_setattr(row, "__pydantic_fields_set__", names)  # pydantic copies it before any change
    _object_setattr(row, "__pydantic_extra__", None)
    _object_setattr(row, "__pydantic_private__", None)
    return row


def make_row(**values: Any) -> SampleRow:
    """A SampleRow from a scanner's already-typed values (see `new_row`); missing ids get pydantic's own error."""
    if "run_id" not in values or "sample_id" not in values:
        return SampleRow(**values)  # let validation name what is missing
    data = row_values()
    data.update(values)
    return new_row(data, fields_set(tuple(values)))
