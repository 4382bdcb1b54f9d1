"""Shared paths and fixtures."""

from __future__ import annotations

import os
from pathlib import Path

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
