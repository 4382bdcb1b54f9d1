"""Recorder logs (openai/evals LocalRecorder, nanoeval JsonRecorder): one JSONL file.

The first scan indexes the file: run headers, rows, and the byte ranges of each
sample's records, so opening a transcript later reads only those bytes.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import ModuleType

from loaders.base import Loader
from loaders.errors import SourceError, UnknownRun, UnknownSample
from loaders.formats import evals_log, nanoeval_log
from loaders.formats.index import RunIndex, ScanContext
from loaders.jsonl import first_records, iter_lines, read_spans
from loaders.registry import register
from loaders.schema import LoadWarning, SampleRow, SourceListing, Transcript

SUFFIXES = (".jsonl", ".log", ".ndjson")
DIALECTS: dict[str, ModuleType] = {"openai-evals": evals_log, "nanoeval": nanoeval_log}


def detect_dialect(path: Path) -> str | None:
    records = first_records(path)
    for name, module in DIALECTS.items():
        if module.detect(records):
            return name
    return None


@register
class RecorderLoader(Loader):
    kind = "recorder"
    label = "Recorder log"

    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.path = Path(source)
        self._lock = threading.Lock()
        self._cached: tuple[str, list[RunIndex], list[LoadWarning]] | None = None

    @classmethod
    def handles(cls, source: str) -> bool:
        path = Path(source)
        return path.is_file() and path.suffix.lower() in SUFFIXES and detect_dialect(path) is not None

    def _scan(self) -> tuple[list[RunIndex], list[LoadWarning]]:
        version = self.version()
        with self._lock:
            if self._cached and self._cached[0] == version:
                return self._cached[1], self._cached[2]
            if not self.path.is_file():
                raise SourceError(self.source, "no such file")
            dialect = detect_dialect(self.path)
            if dialect is None:
                raise SourceError(self.source, "not a recorder log: no spec, event or record_type line in the first 20 records")
            ctx = ScanContext(path=str(self.path), source=self.source)
            try:
                runs = DIALECTS[dialect].scan(iter_lines(self.path, ctx.warnings), ctx)
            except OSError as exc:
                raise SourceError(self.source, f"cannot read: {exc.strerror or exc}") from exc
            self._cached = (version, runs, list(ctx.warnings))
            return runs, list(ctx.warnings)

    def list_runs(self) -> SourceListing:
        runs, warnings = self._scan()
        return SourceListing(source=self.source, kind=self.kind, runs=tuple(r.run for r in runs),
                             warnings=tuple(warnings) if not runs else ())

    def _run(self, run_id: str) -> RunIndex:
        for index in self._scan()[0]:
            if index.run.run_id == run_id:
                return index
        raise UnknownRun(self.source, f"no run {run_id!r} in this log")

    def load_samples(self, run_id: str) -> list[SampleRow]:
        return list(self._run(run_id).rows)

    def load_transcript(self, run_id: str, sample_id: str, attempt: int = 0) -> Transcript:
        index = self._run(run_id)
        spans = index.spans.get((sample_id, attempt))
        if spans is None:
            raise UnknownSample(self.source, f"no sample {sample_id!r} attempt {attempt} in run {run_id}")
        records = read_spans(self.path, spans)
        return DIALECTS[index.run.dialect or "openai-evals"].build_transcript(run_id, sample_id, attempt, records)
