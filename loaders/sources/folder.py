"""A folder of sources: each file or sub-folder that some other kind reads becomes its own source.

Listed last in the registry so that a folder a specific kind claims (a synth run
folder) is read by that kind, not split up.
"""

from __future__ import annotations

from pathlib import Path

from loaders.base import Loader
from loaders.errors import SourceError
from loaders.registry import register
from loaders.schema import LoadWarning, SampleRow, SourceListing, Transcript

MAX_DEPTH = 4
IGNORED = {".git", "__pycache__", "__MACOSX", ".venv", "node_modules"}


@register
class FolderLoader(Loader):
    kind = "folder"
    label = "Folder"

    @classmethod
    def handles(cls, source: str) -> bool:
        return Path(source).is_dir()

    def children(self) -> tuple[list[str], list[LoadWarning]]:
        """The leaf sources below this folder, and a warning per file nothing could read."""
        from loaders.registry import resolve

        leaves: list[str] = []
        warnings: list[LoadWarning] = []

        def walk(folder: Path, depth: int) -> None:
            try:
                entries = sorted(folder.iterdir())
            except OSError as exc:
                warnings.append(LoadWarning(code="unreadable", message=f"cannot list: {exc.strerror}", file=str(folder)))
                return
            for entry in entries:
                if entry.name in IGNORED or entry.name.startswith("."):
                    continue
                try:
                    loader = resolve(str(entry))
                except SourceError as exc:
                    if entry.is_file():
                        warnings.append(LoadWarning(code="unrecognised", message=f"skipped: {exc.detail}", file=str(entry)))
                    continue
                if isinstance(loader, FolderLoader):
                    if depth < MAX_DEPTH:
                        walk(entry, depth + 1)
                else:
                    leaves.append(str(entry))

        walk(Path(self.source), 0)
        return leaves, warnings

    def list_runs(self) -> SourceListing:
        """Folders hold no runs of their own: the app expands them with `children()`."""
        leaves, warnings = self.children()
        if not leaves:
            warnings.insert(0, LoadWarning(code="empty_folder", message="no eval logs, traces or results found", file=self.source))
        return SourceListing(source=self.source, kind=self.kind, warnings=tuple(warnings))

    def load_samples(self, run_id: str) -> list[SampleRow]:
        raise SourceError(self.source, "a folder has no runs of its own; open one of its files")

    def load_transcript(self, run_id: str, sample_id: str, attempt: int = 0) -> Transcript:
        raise SourceError(self.source, "a folder has no runs of its own; open one of its files")
