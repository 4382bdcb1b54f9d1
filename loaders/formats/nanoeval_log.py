"""nanoeval JsonRecorder JSONL (placeholder until the dialect lands)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from loaders.formats.index import RunIndex, ScanContext
from loaders.schema import Transcript

DIALECT = "nanoeval"


def detect(records: list[dict[str, Any]]) -> bool:
    return any("record_type" in r for r in records)


def scan(lines: Iterable[Any], ctx: ScanContext) -> list[RunIndex]:
    raise NotImplementedError


def build_transcript(run_id: str, sample_id: str, attempt: int, records: list[dict[str, Any]]) -> Transcript:
    raise NotImplementedError
