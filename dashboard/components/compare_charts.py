"""Charts of the Compare page: pure DataFrame -> alt.Chart, no streamlit, no statistics.

The numbers (estimates, interval ends, per-seed scores) come ready-made from
`loaders.compare.compare_many`; these functions only draw them, so a chart can never
disagree with the table next to it.
"""

from __future__ import annotations

import altair as alt
import pandas as pd


def score_ci_chart(headlines: pd.DataFrame) -> alt.Chart:
    """Each run's headline score as a point with its interval as an error bar.

    Expects columns `run_id`, `estimate`, `low`, `high`, `role` ("baseline"/"compared").
    """
    base = alt.Chart(headlines).encode(
        y=alt.Y("run_id:N", title=None, sort=None, axis=alt.Axis(labelLimit=320)),
        color=alt.Color("role:N", title=None, scale=alt.Scale(domain=["baseline", "compared"], range=["#808495", "#1c83e1"])),
    )
    bars = base.mark_errorbar(ticks=True, thickness=2).encode(
        x=alt.X("low:Q", title="score (interval)", scale=alt.Scale(domain=[0, 1])), x2="high:Q",
    )
    points = base.mark_point(filled=True, size=80).encode(
        x="estimate:Q",
        tooltip=[alt.Tooltip("run_id:N", title="run"), alt.Tooltip("estimate:Q", format=".3f"),
                 alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f"), alt.Tooltip("n:Q")],
    )
    return (bars + points).properties(height=alt.Step(36))


def seed_scatter(flips: pd.DataFrame, label_a: str = "baseline", label_b: str = "compared") -> alt.Chart:
    """Per-seed score in A (x) against B (y); points above the diagonal improved.

    Pass/fail scores pile up on four corners, so identical points are counted and drawn
    by size. Expects columns `score_a`, `score_b`, `change` (rows without both scores are dropped).
    """
    known = flips.dropna(subset=["score_a", "score_b"])
    counted = known.groupby(["score_a", "score_b", "change"], as_index=False).size().rename(columns={"size": "seeds"})
    diagonal = alt.Chart(pd.DataFrame({"x": [0.0, 1.0], "y": [0.0, 1.0]})).mark_line(strokeDash=[4, 4], color="#808495")
    points = alt.Chart(counted).mark_circle(opacity=0.8).encode(
        x=alt.X("score_a:Q", title=f"score in {label_a}", scale=alt.Scale(domain=[-0.05, 1.05])),
        y=alt.Y("score_b:Q", title=f"score in {label_b}", scale=alt.Scale(domain=[-0.05, 1.05])),
        size=alt.Size("seeds:Q", title="seeds", scale=alt.Scale(range=[40, 600])),
        color=alt.Color("change:N", title=None, scale=alt.Scale(domain=["improved", "regressed", "unchanged"],
                                                                   range=["#21c354", "#ff4b4b", "#808495"])),
        tooltip=["score_a:Q", "score_b:Q", "change:N", "seeds:Q"],
    )
    return (diagonal.encode(x="x:Q", y="y:Q") + points).properties(height=320)


def delta_histogram(flips: pd.DataFrame) -> alt.Chart:
    """Distribution of per-seed deltas (B - A); a pass/fail pair gives -1, 0 or +1."""
    known = flips.dropna(subset=["score_a", "score_b"]).assign(delta=lambda f: f["score_b"] - f["score_a"])
    return alt.Chart(known).mark_bar().encode(
        x=alt.X("delta:Q", bin=alt.Bin(extent=[-1.05, 1.05], step=0.1), title="delta (B - A) per seed",
              axis=alt.Axis(values=[-1, -0.5, 0, 0.5, 1], format="+.1f")),  # bins centred on -1, -0.9 ... 1
        y=alt.Y("count():Q", title="seeds"),
        tooltip=[alt.Tooltip("count():Q", title="seeds")],
    ).properties(height=320)
