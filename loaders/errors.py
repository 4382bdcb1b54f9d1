"""Errors a source can raise; each says what failed and where in one line."""

from __future__ import annotations


class SourceError(Exception):
    """A source could not be read at all (the CLI exits 1 with this message).

    Partial damage is not an error: it becomes a `LoadWarning` and every valid
    record still loads.
    """

    def __init__(self, source: str, detail: str, *, line: int | None = None, status: int | None = None) -> None:
        self.source = source
        self.detail = detail
        self.line = line
        self.status = status
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {detail}")


class UnknownRun(SourceError):
    """The run id is not in this source (stale deep link, renamed file)."""


class UnknownSample(SourceError):
    """The sample/attempt is not in this run."""
