"""Compare: runs side by side on the samples they share, to tell whether a difference is real.

Deep link: `/compare?runs=A,B[,C...]&baseline=A&alpha=0.05&idmap=numeric&flip=regressed&vs=B&sample=S&attempt=0`.
Statistics come from `loaders.compare.compare_many` (the CLI's `evaldash compare` uses the same), so the
page and a CI gate never disagree; this view only reads state, calls `data.*` and renders components.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data
from dashboard.components import compare

st.title("Compare runs")
catalog = data.catalog()
pick = compare.picker(catalog.entries)
compare.report_pick(pick)

if len(pick.run_ids) < 2:
    st.info("Pick at least two runs to compare: above, or on the Runs page (select rows, then Compare).",
            icon=":material/compare_arrows:")
    st.stop()

runs = compare.usable_runs([catalog.entries[r] for r in pick.run_ids], data.rows_of)
if len(runs) < 2:
    st.info("Fewer than two of the chosen runs have per-sample rows, so there is nothing to pair.", icon=":material/info:")
    st.stop()
ids = [e.run_id for e in runs]
baseline = pick.baseline if pick.baseline in ids else ids[0]
if baseline != pick.baseline:
    st.warning("The baseline has no per-sample rows; the first usable run is the baseline instead.", icon=":material/warning:")

result = data.comparison(runs, baseline, pick.alpha, pick.id_map)
compare.headlines(result)

st.subheader("Against the baseline")
for c in result["comparisons"]:
    compare.comparison_block(c, several=len(result["comparisons"]) > 1)

compare.usage(result)

chosen = compare.choose_vs(result)
flip = compare.flips(chosen, result, data.comparison_frames(runs, baseline, pick.alpha, pick.id_map, chosen["run_b"]["run_id"]))
if flip is None:
    st.caption("Select a row in the flips table to see both transcripts side by side.")
    st.stop()

entry_a = catalog.entries[chosen["run_a"]["run_id"]]
entry_b = catalog.entries[chosen["run_b"]["run_id"]]
compare.side_by_side(
    flip, entry_a.run_id, entry_b.run_id,
    load_a=lambda: data.transcript_of(entry_a, flip.sample_id, flip.attempt),
    load_b=lambda: data.transcript_of(entry_b, flip.sample_id_b, flip.attempt),
)
