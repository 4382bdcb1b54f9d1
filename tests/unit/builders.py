"""Small SampleRow/Run builders shared by the pure-transform tests."""

from __future__ import annotations

from typing import Any

from loaders.formats.index import numeric_sort_key
from loaders.schema import Run, SampleRow


def run(run_id: str = "A", **kw: Any) -> Run:
    return Run(run_id=run_id, source="mem", source_kind="test", location="mem", display_name=f"run {run_id}", **kw)


def row(sample_id: str, attempt: int = 0, score: float | None = None, correct: bool | None = None, run_id: str = "A",
        **kw: Any) -> SampleRow:
    if score is None and correct is not None:
        score = float(correct)
    return SampleRow(run_id=run_id, sample_id=sample_id, attempt=attempt, sort_key=numeric_sort_key(sample_id), score=score,
                     correct=correct, **kw)


def binary_rows(passes: list[bool], prefix: str = "s.", run_id: str = "A") -> list[SampleRow]:
    return [row(f"{prefix}{i}", correct=p, run_id=run_id) for i, p in enumerate(passes)]
