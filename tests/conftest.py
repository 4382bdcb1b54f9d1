"""Shared paths and fixtures."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

# Hermetic: no test writes the parsed-log cache under ~/.cache (app subprocesses inherit this too);
# the cache's own tests point it at a tmp dir.
os.environ["EVALDASH_CACHE_DIR"] = "off"

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLES = ROOT / "examples"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


def one_sample_log(path: Path, run_id: str, sample_id: str, events: list[tuple[str, Any]]) -> str:
    """A minimal openai-evals log: a spec line, then one sample's (type, data) events, numbered in order."""
    eval_name = sample_id.rsplit(".", 1)[0] + ".v0"
    lines = [{"spec": {"run_id": run_id, "eval_name": eval_name, "completion_fns": ["m"]}}]
    lines += [{"run_id": run_id, "event_id": i, "sample_id": sample_id, "type": kind, "data": data}
              for i, (kind, data) in enumerate(events)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def long_conversation(n_messages: int) -> list[tuple[str, Any]]:
    """One sampling event whose prompt is `msg-000`, `msg-001`, ... in alternating roles, answered "the end"."""
    prompt = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"msg-{i:03d}"} for i in range(n_messages)]
    return [("sampling", {"prompt": prompt, "sampled": ["the end"]})]
