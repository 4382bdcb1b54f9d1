"""What one scan of a log file yields: run headers, rows, and where each transcript lives."""

from __future__ import annotations

from dataclasses import dataclass, field

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
