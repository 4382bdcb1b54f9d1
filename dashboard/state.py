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
QUERY = "q"  # transcript search text
REGEX = "regex"  # "1": the search text is a regular expression
PART = "part"  # transcript: 1-based part of a long transcript (ITEMS_PER_PART items each)
ALPHA = "alpha"  # compare: significance level, e.g. 0.05
ID_MAP = "idmap"  # compare: how sample ids match across runs, "exact" or "numeric"
FLIP = "flip"  # compare: flips table filter, "all", "changed", "improved", "regressed", "unchanged", "excluded"
VS = "vs"  # compare: which run the flips and transcripts set against the baseline (3+ runs)
# per-seed table (/seeds); `q` and `regex` (above) are its text search, `sample`/`attempt` its selected row
STATUS = "status"  # "all", "passed", "failed", "errored", "flaky"
SCORE_MIN = "smin"  # score range, inclusive; unscored rows drop out once a bound is set
SCORE_MAX = "smax"
GROUP = "group"  # "1": one row per seed, attempts aggregated (k of n passed)
SORT = "sort"  # a column name; default "sample_id" (numeric-aware id order)
DESC = "desc"  # "1": sort descending
PAGE = "page"  # 1-based page of the filtered, sorted table
PAGE_SIZE = "size"  # rows per page: 25, 50, 100 or 250

# session keys
ADDED_SOURCES = "sources.added"
COMPARE_RUNS = "compare.runs"  # compare page widgets mirror the URL above (written back explicitly)
COMPARE_BASELINE = "compare.baseline"
COMPARE_ALPHA = "compare.alpha"
COMPARE_ID_MAP = "compare.idmap"
COMPARE_FLIP = "compare.flip"
COMPARE_VS = "compare.vs"
COMPARE_FLIPS_TABLE = "compare.flips"


def param(name: str, default: str | None = None) -> str | None:
    value = st.query_params.get(name)
    return value if value not in (None, "") else default


def int_param(name: str, default: int = 0) -> int:
    try:
        return int(st.query_params.get(name, default))
    except (TypeError, ValueError):
        return default


def bool_param(name: str) -> bool:
    """Flags in links: `1`, `true`, `yes` and `on` mean set; anything else (or absent) means not."""
    return (st.query_params.get(name) or "").strip().lower() in ("1", "true", "yes", "on")


def list_param(name: str) -> list[str]:
    """`?runs=A,B` and `?runs=A&runs=B` both give [A, B]."""
    out: list[str] = []
    for value in st.query_params.get_all(name):
        out.extend(v for v in value.split(",") if v)
    return out
