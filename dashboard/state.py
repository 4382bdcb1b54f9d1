"""The URL contract and widget keys, in one place.

Query-parameter names are a promise to users who paste links: extend, never rename.
"""

from __future__ import annotations

import streamlit as st

# query parameters (deep links)
RUN = "run"
RUNS = "runs"
BASELINE = "baseline"
SAMPLE = "sample"
ATTEMPT = "attempt"
SOURCE = "source"  # extra sources a link carries (repeatable)

# session keys
ADDED_SOURCES = "sources.added"


def param(name: str, default: str | None = None) -> str | None:
    value = st.query_params.get(name)
    return value if value not in (None, "") else default


def int_param(name: str, default: int = 0) -> int:
    try:
        return int(st.query_params.get(name, default))
    except (TypeError, ValueError):
        return default


def list_param(name: str) -> list[str]:
    """`?runs=A,B` and `?runs=A&runs=B` both give [A, B]."""
    out: list[str] = []
    for value in st.query_params.get_all(name):
        out.extend(v for v in value.split(",") if v)
    return out
