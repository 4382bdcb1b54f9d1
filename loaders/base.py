"""The contract every source kind implements.

Modelled on inspect_ai's recorders: a cheap `handles(source)` check, then three reads
of rising cost: the run headers, one run's sample rows, one transcript.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from loaders.schema import SampleRow, SourceListing, Transcript


class Loader(ABC):
    kind: ClassVar[str]
    label: ClassVar[str]  # human name of the source kind, for the UI

    def __init__(self, source: str) -> None:
        self.source = source

    @classmethod
    @abstractmethod
    def handles(cls, source: str) -> bool:
        """Cheap test (scheme, extension, first bytes); never parses the whole input."""

    def version(self) -> str:
        """A token that changes when the source's content may have changed (cache key)."""
        return path_version(Path(self.source))

    @abstractmethod
    def list_runs(self) -> SourceListing: ...

    @abstractmethod
    def load_samples(self, run_id: str) -> list[SampleRow]: ...

    @abstractmethod
    def load_transcript(self, run_id: str, sample_id: str, attempt: int = 0) -> Transcript: ...


def path_version(path: Path) -> str:
    """size+mtime of a file, or of every file under a folder (no content is read)."""
    try:
        if path.is_dir():
            parts = []
            for root, _dirs, files in os.walk(path):
                for name in sorted(files):
                    st = os.stat(os.path.join(root, name))
                    parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            return str(hash("|".join(sorted(parts))))
        st = path.stat()
        return f"{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        return "missing"
