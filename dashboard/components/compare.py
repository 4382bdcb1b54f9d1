"""Compare page components: the picker bound to the URL, verdict blocks, flips and transcripts side by side.

Every number comes from `loaders.compare.compare_many` (through `data.comparison`); nothing here
computes a statistic. Run ids, sample ids and transcript text come from files we do not control,
so they are shown with `st.text`/`st.code`/dataframes only; Markdown-interpreting calls
(`st.caption`, `st.warning`, metric labels) get developer-written strings and numbers only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.components import compare_charts
from loaders.catalog import Entry
from loaders.compare import ID_MAPS, transcript_alignment
from loaders.schema import Message, SampleRow, Transcript

ALPHAS = (0.001, 0.01, 0.05, 0.1)
DEFAULT_ALPHA = 0.05
FLIP_FILTERS = ("all", "changed", "improved", "regressed", "unchanged", "excluded")
ID_MAP_LABELS = {"exact": "exact id", "numeric": "numeric suffix"}
MAX_LISTED = 500  # ids listed per "only in" box
MAX_PAIRS = 300  # message pairs drawn side by side


# ---------------------------------------------------------------- picker (URL is the source of truth)


@dataclass
class Pick:
    """What the URL (and the widgets mirroring it) asks to compare, with what was wrong in it."""

    run_ids: list[str]
    baseline: str | None
    alpha: float
    id_map: str
    unknown_runs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # developer-written sentences (safe for st.warning)
    bad_values: list[str] = field(default_factory=list)  # the offending URL values, shown inert


def _set_param(name: str, value: str | None, default: str | None = None) -> None:
    """Write one query parameter; an empty or default value is removed to keep links short."""
    if value in (None, "") or value == default:
        if name in st.query_params:
            del st.query_params[name]
    else:
        st.query_params[name] = value


def _drop_selection() -> None:
    """A chosen sample belongs to one pair of runs: forget it when the runs change."""
    for name in (state.SAMPLE, state.ATTEMPT):
        _set_param(name, None)


def _on_runs() -> None:
    runs = list(st.session_state.get(state.COMPARE_RUNS) or [])
    _set_param(state.RUNS, ",".join(runs))
    if st.query_params.get(state.BASELINE) not in runs:
        _set_param(state.BASELINE, runs[0] if runs else None)
    _drop_selection()


def _on_baseline() -> None:
    _set_param(state.BASELINE, st.session_state.get(state.COMPARE_BASELINE))
    _set_param(state.VS, None)
    _drop_selection()


def _on_alpha() -> None:
    _set_param(state.ALPHA, f"{st.session_state.get(state.COMPARE_ALPHA, DEFAULT_ALPHA):g}", f"{DEFAULT_ALPHA:g}")


def _on_id_map() -> None:
    _set_param(state.ID_MAP, st.session_state.get(state.COMPARE_ID_MAP) or "exact", "exact")


def _alpha_from_url(pick: Pick) -> float:
    raw = state.param(state.ALPHA)
    if raw is None:
        return DEFAULT_ALPHA
    try:
        alpha = float(raw)
    except ValueError:
        alpha = -1.0
    if 0 < alpha < 1:
        return alpha
    pick.problems.append("The significance level in the link is not a number between 0 and 1; using 0.05.")
    pick.bad_values.append(f"alpha={raw}")
    return DEFAULT_ALPHA


def picker(entries: Mapping[str, Entry]) -> Pick:
    """Runs (any sources), baseline, alpha and id map, initialised from the URL and written back to it.

    Widgets are mirrored from the URL on every run instead of `bind="query-params"`: the contract
    is `runs=A,B` (comma-separated, like the Runs page's Compare button writes) and unknown ids
    must be reported, where a bound multiselect expects repeated keys and drops unknown values silently.
    """
    wanted = list(dict.fromkeys(state.list_param(state.RUNS)))
    pick = Pick(run_ids=[r for r in wanted if r in entries], baseline=None, alpha=DEFAULT_ALPHA, id_map="exact",
                unknown_runs=[r for r in wanted if r not in entries])
    pick.alpha = _alpha_from_url(pick)
    raw_map = state.param(state.ID_MAP, "exact") or "exact"
    if raw_map in ID_MAPS:
        pick.id_map = raw_map
    else:
        pick.problems.append("The id map in the link is not one of exact / numeric; using exact.")
        pick.bad_values.append(f"idmap={raw_map}")
    raw_base = state.param(state.BASELINE)
    if raw_base in pick.run_ids:
        pick.baseline = raw_base
    else:
        pick.baseline = pick.run_ids[0] if pick.run_ids else None
        if raw_base is not None:
            pick.problems.append("The baseline in the link is not among the compared runs; using the first run.")
            pick.bad_values.append(f"baseline={raw_base}")

    st.session_state[state.COMPARE_RUNS] = pick.run_ids
    st.session_state[state.COMPARE_BASELINE] = pick.baseline
    alphas = sorted({*ALPHAS, pick.alpha})
    st.session_state[state.COMPARE_ALPHA] = pick.alpha
    st.session_state[state.COMPARE_ID_MAP] = pick.id_map

    cols = st.columns([5, 2, 1, 3], vertical_alignment="bottom")
    cols[0].multiselect("Runs", list(entries), key=state.COMPARE_RUNS, on_change=_on_runs, wrap=True,
                        format_func=lambda r: f"{r} · {entries[r].run.display_name}" if r in entries else r,
                        placeholder="Pick two or more runs, from any source")
    cols[1].selectbox("Baseline", pick.run_ids, key=state.COMPARE_BASELINE, on_change=_on_baseline,
                      disabled=not pick.run_ids, help="Every other run is compared against this one")
    cols[2].selectbox("Alpha", alphas, key=state.COMPARE_ALPHA, on_change=_on_alpha, format_func=lambda a: f"{a:g}",
                      help="Significance level of the paired tests; intervals are at 1 - alpha")
    cols[3].segmented_control("Match samples by", ID_MAPS, key=state.COMPARE_ID_MAP, on_change=_on_id_map, required=True,
                              format_func=ID_MAP_LABELS.get,
                              help="numeric: `arc.dev.12` in one run and seed `12` in another are the same sample")
    return pick


def report_pick(pick: Pick) -> None:
    """Say what in the link could not be used, inert; never a crash."""
    if pick.unknown_runs:
        st.error(f"{len(pick.unknown_runs)} run id(s) in the link are not in the loaded sources. "
                 "Add the source that holds them in the sidebar, or pick runs above.", icon=":material/error:")
        st.code("\n".join(pick.unknown_runs), language=None)
    for problem in pick.problems:
        st.warning(problem, icon=":material/warning:")
    if pick.bad_values:
        st.code("\n".join(pick.bad_values), language=None)


def usable_runs(entries: Sequence[Entry], rows_of: Callable[[Entry], list[SampleRow]]) -> list[Entry]:
    """The runs that have per-sample rows; the others are named with the reason, then left out."""
    usable, dropped = [], []
    for e in entries:
        try:
            rows = rows_of(e)
        except Exception as exc:  # noqa: BLE001 - one unreadable run must not take the page down
            dropped.append(f"{e.run_id}: rows could not be loaded ({getattr(exc, 'detail', None) or exc})")
            continue
        if rows:
            usable.append(e)
        elif e.run.attribution == "aggregate_only" or not e.run.has_sample_ids:
            dropped.append(f"{e.run_id}: reports aggregate counts only (no per-sample rows)")
        else:
            dropped.append(f"{e.run_id}: has no sample rows")
    if dropped:
        st.warning(f"{len(dropped)} run(s) cannot be compared sample by sample and are left out:", icon=":material/warning:")
        st.code("\n".join(dropped), language=None, wrap_lines=True)
    return usable


# ---------------------------------------------------------------- frames (pure: result dict -> DataFrame)


def _pct(confidence: float) -> str:
    return f"{confidence * 100:g}%"


def headlines_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for h in result["headlines"]:
        ci = h["headline"]
        rows.append({"run_id": h["run_id"], "role": "baseline" if h["run_id"] == result["baseline"] else "compared",
                     "display_name": h["display_name"], "model": h["model"], "source_kind": h["source_kind"],
                     "n_samples": h["n_samples"], "n_attempts": h["n_attempts"], "estimate": ci["estimate"],
                     "low": ci["low"], "high": ci["high"], "n": ci["n"], "method": ci["method"]})
    return pd.DataFrame(rows)


def filter_flips(frame: pd.DataFrame, flip: str) -> pd.DataFrame:
    if flip == "all":
        return frame
    wanted = ("improved", "regressed") if flip == "changed" else (flip,)
    return frame[frame["change"].isin(wanted)].reset_index(drop=True)


def seeds_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """Each seed's k/n in every run (baseline first) and whether it is flaky there."""
    comparisons = [c for c in result["comparisons"] if c["seeds"]]
    if not comparisons:
        return pd.DataFrame()
    base = result["baseline"]
    table: dict[str, dict[str, Any]] = {}
    for c in comparisons:
        other = c["run_b"]["run_id"]
        for s in c["seeds"]:
            row = table.setdefault(s["sample_id"], {"sample_id": s["sample_id"]})
            row[f"k/n · {base}"] = f"{s['k_a']}/{s['n_a']}"
            row[f"flaky · {base}"] = s["flaky_a"]
            row[f"k/n · {other}"] = f"{s['k_b']}/{s['n_b']}"
            row[f"flaky · {other}"] = s["flaky_b"]
    return pd.DataFrame(list(table.values()))


USAGE_LABELS = {"tokens_in": "tokens in", "tokens_out": "tokens out", "tokens_total": "tokens total", "cost_usd": "cost ($)",
                "latency_ms": "latency (ms)"}


def usage_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    rows = []
    for c in result["comparisons"]:
        for name, u in c["usage"].items():
            rows.append({"run_id": c["run_b"]["run_id"], "measure": USAGE_LABELS.get(name, name), "total_baseline": u["total_a"],
                         "total_run": u["total_b"], "delta": u["delta"], "mean_baseline": u["mean_a"], "mean_run": u["mean_b"],
                         "pairs": u["n"]})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- rendering


def headlines(result: Mapping[str, Any]) -> None:
    """Per run: headline score with its interval, as a table and as error bars."""
    frame = headlines_frame(result)
    conf = _pct(result["comparisons"][0]["confidence"]) if result["comparisons"] else "95%"
    st.subheader("Headline per run")
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "run_id": st.column_config.TextColumn("Run", pinned=True),
        "role": st.column_config.TextColumn("Role"),
        "display_name": st.column_config.TextColumn("Name"),
        "model": st.column_config.TextColumn("Model"),
        "source_kind": st.column_config.TextColumn("Kind"),
        "n_samples": st.column_config.NumberColumn("Samples"),
        "n_attempts": st.column_config.NumberColumn("Attempts"),
        "estimate": st.column_config.NumberColumn("Score", format="%.3f"),
        "low": st.column_config.NumberColumn(f"{conf} CI low", format="%.3f"),
        "high": st.column_config.NumberColumn(f"{conf} CI high", format="%.3f"),
        "n": st.column_config.NumberColumn("n graded"),
        "method": st.column_config.TextColumn("Interval"),
    })
    st.altair_chart(compare_charts.score_ci_chart(frame.dropna(subset=["estimate"])), width="stretch")


def _num(value: float | None, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)


def verdict(c: Mapping[str, Any]) -> None:
    """Significant or not, regression or not, in plain words (numbers only, no untrusted text)."""
    p, alpha = c["p_value"], c["alpha"]
    if p is None:
        st.info("Nothing to test: no pairs carry information (no discordant pairs or no non-zero differences).",
                icon=":material/info:")
    elif c["regression"]:
        st.error(f"Regression: significantly worse than the baseline (p = {p:.3g} < alpha = {alpha:g}).",
                 icon=":material/trending_down:")
    elif c["improvement"]:
        st.success(f"Improvement: significantly better than the baseline (p = {p:.3g} < alpha = {alpha:g}).",
                   icon=":material/trending_up:")
    else:
        st.info(f"Not significant: no difference at alpha = {alpha:g} (p = {p:.3g}).", icon=":material/drag_handle:")


def comparability(c: Mapping[str, Any]) -> None:
    """Samples in both / only in one run, counted and listed; never silently dropped."""
    cols = st.columns(3)
    cols[0].metric("Samples in both", c["n_both"])
    cols[1].metric("Only in baseline", len(c["only_a"]))
    cols[2].metric("Only in this run", len(c["only_b"]))
    if c["sets_differ"]:
        st.warning(f"The runs hold different samples: {len(c['only_a'])} only in the baseline, {len(c['only_b'])} only in "
                   f"this run ({len(c['only_a_attempts']) + len(c['only_b_attempts'])} unmatched attempts of shared samples). "
                   "The statistics use the samples in both.", icon=":material/rule:")
    with st.expander("Which samples are in one run only", expanded=False):
        for label, ids in (("Only in the baseline", c["only_a"]), ("Only in this run", c["only_b"])):
            st.text(f"{label}: {len(ids)}")
            if ids:
                more = f"\n… and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
                st.code("\n".join(ids[:MAX_LISTED]) + more, language=None)
        extra = [f"A {s} attempt {a}" for s, a in c["only_a_attempts"]] + [f"B {s} attempt {a}" for s, a in c["only_b_attempts"]]
        if extra:
            st.text("Unmatched attempts of shared samples")
            st.code("\n".join(extra[:MAX_LISTED]), language=None)


def comparison_block(c: Mapping[str, Any], several: bool) -> None:
    """One run against the baseline: comparability, delta with paired CI, p-value with the test, n, verdict."""
    with st.container(border=True):
        st.text(f"{c['run_b']['run_id']} · {c['run_b']['display_name']}\nagainst baseline {c['run_a']['run_id']}")
        comparability(c)
        if not c["n_both"]:
            st.error("No sample is in both runs, so there is nothing to pair. If the runs name samples differently "
                     "(`arc.dev.12` and `12`), match samples by numeric suffix.", icon=":material/link_off:")
            return
        low, high = c["delta_ci"]
        cols = st.columns([2, 3, 2, 1])
        cols[0].metric("Delta (run − baseline)", _num(c["delta"], "+.3f"),
                       help=f"mean {_num(c['mean_b'])} vs {_num(c['mean_a'])} on the {c['n_used']} units used")
        cols[1].metric(f"{_pct(c['confidence'])} paired CI", f"[{_num(low, '+.3f')}, {_num(high, '+.3f')}]",
                       help=c["delta_ci_method"])
        cols[2].metric("p-value", _num(c["p_value"], ".4g"), help=f"exact: {c['p_value']!r}")
        unit = "samples (mean over attempts)" if c["unit"] == "sample" else "pairs"
        cols[3].metric("n used", c["n_used"], help=f"{unit}; {c['n_excluded']} pair(s) excluded (no score on one side)")
        st.caption(f"Test: {c['test']}, on {c['test_n']} informative pair(s)."
                   + (f" Benjamini-Hochberg adjusted p = {c['p_value_adjusted']:.4g}." if several else ""))
        if c["test_note"]:
            st.text(c["test_note"])
        verdict(c)
        if c["warnings"]:
            st.code("\n".join(c["warnings"]), language=None, wrap_lines=True)


def usage(result: Mapping[str, Any]) -> None:
    frame = usage_frame(result)
    st.subheader("Tokens, cost and latency")
    st.caption("Totals over the aligned pairs where both runs recorded the measure; empty = not recorded.")
    st.dataframe(frame, hide_index=True, width="stretch", column_config={
        "run_id": st.column_config.TextColumn("Run (vs baseline)"),
        "measure": st.column_config.TextColumn("Measure"),
        "total_baseline": st.column_config.NumberColumn("Baseline total", format="%.4g"),
        "total_run": st.column_config.NumberColumn("Run total", format="%.4g"),
        "delta": st.column_config.NumberColumn("Delta", format="%+.4g"),
        "mean_baseline": st.column_config.NumberColumn("Baseline mean", format="%.4g"),
        "mean_run": st.column_config.NumberColumn("Run mean", format="%.4g"),
        "pairs": st.column_config.NumberColumn("Pairs"),
    })


def choose_vs(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """The comparison whose flips and transcripts are shown: `vs` in the URL, else the first."""
    by_run = {c["run_b"]["run_id"]: c for c in result["comparisons"]}
    others = list(by_run)
    st.subheader("Flips")
    wanted = state.param(state.VS)
    chosen = wanted if wanted in by_run else others[0]
    if len(others) > 1:
        st.session_state[state.COMPARE_VS] = chosen
        st.selectbox("Flips of", others, key=state.COMPARE_VS, help="Which run's flips against the baseline to show",
                     on_change=lambda: (_set_param(state.VS, st.session_state.get(state.COMPARE_VS), others[0]), _drop_selection()))
        if wanted is not None and wanted not in by_run:
            st.warning("The run named by vs= in the link is not compared here; showing the first.", icon=":material/warning:")
    return by_run[chosen]


def flips_table_key(vs: str, flip: str) -> str:
    """The flips table's widget key; the filter is part of it so a new filter starts with no stale row selected."""
    return f"{state.COMPARE_FLIPS_TABLE}.{vs}.{flip}"


@dataclass(frozen=True)
class Flip:
    sample_id: str  # in the baseline
    sample_id_b: str  # in the compared run (differs under the numeric id map)
    attempt: int


def _url_flip(frame: pd.DataFrame) -> tuple[Flip | None, str | None]:
    """The flip the URL names (`sample` in either run's naming, `attempt`), or why it names none."""
    sample = state.param(state.SAMPLE)
    if sample is None:
        return None, None
    raw_attempt = state.param(state.ATTEMPT)
    hits = frame[(frame["sample_id"] == sample) | (frame["sample_id_b"] == sample)]
    if raw_attempt is not None:
        hits = hits[hits["attempt"].astype(str) == raw_attempt]
    if hits.empty:
        return None, f"sample={sample}" + (f" attempt={raw_attempt}" if raw_attempt is not None else "")
    row = hits.iloc[0]
    return Flip(str(row["sample_id"]), str(row["sample_id_b"]), int(row["attempt"])), None


def flips(c: Mapping[str, Any], result: Mapping[str, Any], frames: Mapping[str, pd.DataFrame]) -> Flip | None:
    """Counts, the filterable flips table (filter and selection in the URL), per-seed k/n and flakiness, charts.

    Returns the flip whose transcripts to open: the selected row, else the one the URL names.
    """
    vs = c["run_b"]["run_id"]
    cols = st.columns(4)
    cols[0].metric("Improved", c["improved"])
    cols[1].metric("Regressed", c["regressed"])
    cols[2].metric("Unchanged", c["unchanged"])
    cols[3].metric("Excluded", c["n_excluded"], help="pairs without a score on one side (system error or ungraded)")
    if c["unit"] == "sample":
        st.caption("Several attempts per sample: counts and the test are per sample (mean over its attempts); "
                   "the table lists each attempt.")

    raw_flip = state.param(state.FLIP, "all") or "all"
    flip = raw_flip if raw_flip in FLIP_FILTERS else "all"
    if raw_flip != flip:
        st.warning("The flips filter in the link is not one of all / changed / improved / regressed / unchanged / excluded.",
                   icon=":material/warning:")
    st.session_state[state.COMPARE_FLIP] = flip
    st.segmented_control("Show", FLIP_FILTERS, key=state.COMPARE_FLIP, required=True,
                         on_change=lambda: _set_param(state.FLIP, st.session_state.get(state.COMPARE_FLIP), "all"))

    every = frames["flips"]  # built once per comparison in the data layer, not on every rerun
    url_pick, missing = _url_flip(every)
    if missing:
        st.warning("The sample chosen in the link is not among the aligned samples of these two runs.", icon=":material/warning:")
        st.code(missing, language=None)
    frame = filter_flips(every, flip)
    key = flips_table_key(vs, flip)
    default = _row_of(frame, url_pick) if url_pick is not None and key not in st.session_state else []
    show_b = bool((frame["sample_id"] != frame["sample_id_b"]).any())
    event = st.dataframe(
        frame, key=key, on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch", height=320,
        column_order=["sample_id", *(["sample_id_b"] if show_b else []), "attempt", "score_a", "score_b", "change"],
        selection_default={"selection": {"rows": default, "columns": [], "cells": []}} if default else None,
        column_config={
            "sample_id": st.column_config.TextColumn("Sample (baseline)", pinned=True),
            "sample_id_b": st.column_config.TextColumn("Sample (run)"),
            "attempt": st.column_config.NumberColumn("Attempt"),
            "score_a": st.column_config.NumberColumn("Baseline", format="%.3g"),
            "score_b": st.column_config.NumberColumn("Run", format="%.3g"),
            "change": st.column_config.TextColumn("Change"),
        },
    )
    st.caption(f"{len(frame)} of {len(every)} aligned pairs · select a row to open both transcripts below")
    rows = event.selection.rows if event and event.selection else []
    selected = _flip_at(frame, rows[0]) if rows and rows[0] < len(frame) else None
    seen_key = f"{key}.seen"
    if selected != st.session_state.get(seen_key):  # the user changed the selection: it becomes the link
        st.session_state[seen_key] = selected
        _set_param(state.SAMPLE, selected.sample_id if selected else None)
        _set_param(state.ATTEMPT, str(selected.attempt) if selected else None)
        url_pick = selected

    _flakiness(c, result)
    left, right = st.columns(2)
    points = frames["points"]
    left.altair_chart(compare_charts.seed_scatter(points, "baseline", "this run"), width="stretch")
    right.altair_chart(compare_charts.delta_histogram(points), width="stretch")
    return url_pick


def _row_of(frame: pd.DataFrame, pick: Flip) -> list[int]:
    """Position of one flip in the (filtered) table, found vectorised: the table may hold 100k pairs."""
    mask = (frame["sample_id"] == pick.sample_id) & (frame["sample_id_b"] == pick.sample_id_b) & (frame["attempt"] == pick.attempt)
    hits = mask.to_numpy().nonzero()[0]
    return [int(hits[0])] if len(hits) else []


def _flip_at(frame: pd.DataFrame, position: int) -> Flip:
    row = frame.iloc[position]
    return Flip(str(row["sample_id"]), str(row["sample_id_b"]), int(row["attempt"]))


def _flakiness(c: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    if not c["seeds"]:
        return
    st.subheader("Attempts per seed")
    cols = st.columns(2)
    cols[0].metric("Became flaky", len(c["became_flaky"]), help="flaky (mixed pass/fail attempts) in this run, not in the baseline")
    cols[1].metric("Stopped being flaky", len(c["stopped_being_flaky"]), help="flaky in the baseline, not in this run")
    for label, ids in (("Became flaky", c["became_flaky"]), ("Stopped being flaky", c["stopped_being_flaky"])):
        if ids:
            st.text(label)
            st.code("\n".join(ids), language=None)
    st.dataframe(seeds_frame(result), hide_index=True, width="stretch")


# ---------------------------------------------------------------- transcripts side by side


def _message(msg: Message | None) -> None:
    if msg is None:
        st.text("(no message at this position)")
        return
    with st.chat_message(msg.role or "?"):
        st.text(f"{msg.role or '?'}" + (f" · {msg.name}" if msg.name else "") + (f" → {msg.recipient}" if msg.recipient else ""))
        if msg.reasoning:
            with st.expander("reasoning"):
                st.text(msg.reasoning)
        if msg.text:
            st.text(msg.text)
        for call in msg.tool_calls:
            args = call.arguments if call.arguments is not None else call.arguments_raw
            st.code(f"{call.name}({json.dumps(args, ensure_ascii=False, default=str, indent=1)})", language=None, wrap_lines=True)
        for part in msg.parts:
            st.code(json.dumps({"type": part.type, "text": part.text}, ensure_ascii=False, default=str), language="json")


def _pair_row(pair: Mapping[str, Any]) -> None:
    left, right = st.columns(2)
    with left:
        _message(pair["a"])
    with right:
        _message(pair["b"])


def _grade_line(t: Transcript) -> str:
    g = t.grade
    score = "–" if g.score is None else f"{g.score:g}"
    return f"score {score}" + ("" if g.correct is None else f" · {'correct' if g.correct else 'incorrect'}") + (
        f" · error: {g.error}" if g.error else "")


def side_by_side(flip: Flip, run_a: str, run_b: str, load_a: Callable[[], Transcript], load_b: Callable[[], Transcript]) -> None:
    """One seed in two runs, message by message, with the first diverging message marked."""
    st.subheader("Transcripts side by side")
    loaded: list[Transcript | None] = []
    heads = st.columns(2)
    for col, run, sample, load in ((heads[0], run_a, flip.sample_id, load_a), (heads[1], run_b, flip.sample_id_b, load_b)):
        with col:
            st.text(f"{run}\n{sample} · attempt {flip.attempt}")
            try:
                t = load()
            except Exception as exc:  # noqa: BLE001 - show why, keep the page
                st.error("This transcript could not be loaded.", icon=":material/error:")
                st.code(str(getattr(exc, "detail", None) or exc), language=None)
                t = None
            if t is not None:
                st.text(_grade_line(t))
                st.page_link("views/transcript.py", label="Open on the Transcript page", icon=":material/forum:",
                             query_params={state.RUN: run, state.SAMPLE: sample, state.ATTEMPT: str(flip.attempt)})
            loaded.append(t)
    ta, tb = loaded
    if ta is None or tb is None:
        return
    al = transcript_alignment(ta.messages, tb.messages)
    pairs, first = al["pairs"], al["first_divergence"]
    if not pairs:
        st.info("Neither transcript has messages.")
        return
    if first is None:
        st.success(f"The transcripts are identical ({len(pairs)} messages).", icon=":material/check:")
        prefix, rest = pairs, []
    else:
        prefix, rest = pairs[:first], pairs[first:]
    if prefix:
        with st.expander(f"{len(prefix)} identical message(s)" + (" before the first divergence" if rest else ""),
                         expanded=first is None and len(prefix) <= 6):
            for pair in prefix[:MAX_PAIRS]:
                _pair_row(pair)
    for i, pair in enumerate(rest[:MAX_PAIRS]):
        if i == 0:
            st.badge(f"First divergence: message {pair['index'] + 1} of {al['n_a']} / {al['n_b']}", icon=":material/call_split:",
                     color="orange")
        elif not pair["same"]:
            st.badge(f"message {pair['index'] + 1} differs", color="gray")
        _pair_row(pair)
    if len(rest) > MAX_PAIRS:
        st.caption(f"{len(rest) - MAX_PAIRS} more message pairs not drawn; open each transcript on its own page.")
