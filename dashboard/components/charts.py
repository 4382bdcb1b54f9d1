"""Altair chart builders for the run pages: pure functions, DataFrame in, `alt.Chart` out.

Values are binned in pandas/numpy first, so a chart carries a few dozen bars whatever
the run size (altair refuses to embed more than 5,000 rows, and the browser would
struggle long before that). Unknown values (None/NaN) are left out, never drawn as 0.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

BINS = 20
OUTCOME_ORDER = ["passed", "failed", "errored", "ungraded"]
OUTCOME_COLORS = ["#2e7d32", "#c62828", "#6d4c41", "#9e9e9e"]


def histogram_frame(values: pd.Series, bins: int = BINS, value_range: tuple[float, float] | None = None) -> pd.DataFrame:
    """Counts per bin (`start`, `end`, `count`) of the known values; empty when none is known."""
    known = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype="float64")
    if known.size == 0:
        return pd.DataFrame({"start": [], "end": [], "count": []})
    lo, hi = value_range or (float(known.min()), float(known.max()))
    if lo == hi:  # one distinct value: a single bar of unit width around it
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(known, bins=bins, range=(lo, hi))
    return pd.DataFrame({"start": edges[:-1], "end": edges[1:], "count": counts})


def distribution(values: pd.Series, title: str, unit: str = "", bins: int = BINS,
                 value_range: tuple[float, float] | None = None) -> alt.Chart:
    """A histogram of one numeric column (latency, tokens, cost, continuous scores)."""
    frame = histogram_frame(values, bins, value_range)
    label = f"{title} ({unit})" if unit else title
    return (
        alt.Chart(frame, title=title)
        .mark_bar()
        .encode(
            x=alt.X("start:Q", bin="binned", title=label),
            x2="end:Q",
            y=alt.Y("count:Q", title="attempts"),
            tooltip=[alt.Tooltip("start:Q", title="from", format=",.4~g"), alt.Tooltip("end:Q", title="to", format=",.4~g"),
                     alt.Tooltip("count:Q", title="attempts")],
        )
        .properties(height=220)
    )


def outcome_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Attempts per outcome (passed / failed / errored / ungraded) from a `seed_table` frame."""
    counts = frame["status"].value_counts() if "status" in frame else pd.Series(dtype="int64")
    return pd.DataFrame({"outcome": OUTCOME_ORDER, "count": [int(counts.get(o, 0)) for o in OUTCOME_ORDER]})


def outcome_bars(frame: pd.DataFrame) -> alt.Chart:
    """Pass/fail runs: how many attempts passed, failed, errored (a histogram of 0/1 says less)."""
    counts = outcome_counts(frame)
    counts = counts[counts["count"] > 0]
    return (
        alt.Chart(counts, title="Outcomes")
        .mark_bar()
        .encode(
            x=alt.X("count:Q", title="attempts"),
            y=alt.Y("outcome:N", sort=OUTCOME_ORDER, title=None),
            color=alt.Color("outcome:N", scale=alt.Scale(domain=OUTCOME_ORDER, range=OUTCOME_COLORS), legend=None),
            tooltip=["outcome:N", "count:Q"],
        )
        .properties(height=alt.Step(28))
    )


def score_distribution(frame: pd.DataFrame, binary: bool) -> alt.Chart:
    """Outcome bars for pass/fail scores, a 0..1 histogram (or the data's range) for continuous ones."""
    if binary:
        return outcome_bars(frame)
    scores = pd.to_numeric(frame["score"], errors="coerce").dropna()
    in_unit = scores.empty or (scores.min() >= 0 and scores.max() <= 1)
    return distribution(frame["score"], "Score distribution", value_range=(0.0, 1.0) if in_unit else None)


def pass_at_k_line(table: pd.DataFrame) -> alt.Chart:
    """pass@k against k, with points (a table row per k: `k`, `pass_at_k`)."""
    base = alt.Chart(table, title="pass@k").encode(
        x=alt.X("k:O", title="k (attempts)"),
        y=alt.Y("pass_at_k:Q", title="pass@k", scale=alt.Scale(domain=[0, 1])),
        tooltip=["k:O", alt.Tooltip("pass_at_k:Q", format=".3f"), "n_samples:Q"],
    )
    return (base.mark_line() + base.mark_point(filled=True)).properties(height=200)
