"""What one scan of a log file yields: run headers, rows, and where each transcript lives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loaders.schema import LoadWarning, Run, SampleRow

Span = tuple[int, int]  # (byte offset, length) of one line in the file
TranscriptKey = tuple[str, int]  # (sample_id, attempt)


@dataclass
class RunIndex:
    run: Run
    rows: list[SampleRow]
    spans: dict[TranscriptKey, list[Span]] = field(default_factory=dict)


@dataclass
class ScanContext:
    """Shared by a dialect's scan: where we are and what went wrong so far."""

    path: str
    source: str
    warnings: list[LoadWarning] = field(default_factory=list)

    def warn(self, code: str, message: str, line: int | None = None) -> None:
        self.warnings.append(LoadWarning(code=code, message=message, file=self.path, line=line))


def numeric_sort_key(sample_id: str) -> tuple[int, str]:
    """Order `x.dev.84` before `x.dev.100`: by the integer after the last `.`, `_` or `-`."""
    tail = sample_id
    for sep in (".", "_", "-", "#"):
        tail = tail.rsplit(sep, 1)[-1]
    try:
        return (int(tail), sample_id)
    except ValueError:
        return (1 << 62, sample_id)


_ROW_DEFAULTS: dict[str, Any] = {name: f.get_default(call_default_factory=False) for name, f in SampleRow.model_fields.items()}


_FIELDS_SETS: dict[tuple[str, ...], set[str]] = {}


def make_row(**values: Any) -> SampleRow:
    """A SampleRow from a scanner's already-typed values, skipping pydantic's per-row validation.

    Validation costs ~10 µs a row, the largest share of ingesting 100k rows; scanners build every value
    with its exact type, and tests re-validate every fixture's rows to prove these rows equal validated ones.
    """
    if "run_id" not in values or "sample_id" not in values:
        return SampleRow(**values)  # let validation name what is missing
    data = dict(_ROW_DEFAULTS)
    data.update(values)
    if "metrics" not in values:
        data["metrics"] = {}
    names = tuple(values)
    fields_set = _FIELDS_SETS.get(names)
    if fields_set is None:  # a few distinct keyword sets per scanner: one shared set each (a set is ~2 KB a row)
        fields_set = _FIELDS_SETS[names] = set(values)
    row = SampleRow.__new__(SampleRow)
    object.__setattr__(row, "__dict__", data)
    object.__setattr__(row, "__pydantic_fields_set__", fields_set)  # pydantic copies it before any change
    object.__setattr__(row, "__pydantic_extra__", None)
    object.__setattr__(row, "__pydantic_private__", None)
    return row
