"""The per-seed table (`/seeds?run=ID&...`): every bundled run renders; filters, sort, paging and
grouping come from the URL; a bad regex says so; selecting a row opens its transcript."""

from __future__ import annotations

import math

import pytest
from streamlit.testing.v1 import AppTest

from loaders.catalog import build_catalog
from loaders.registry import resolve
from tests.conftest import EXAMPLES, one_sample_log

CATALOG = build_catalog([str(EXAMPLES)])
ALL_RUNS = sorted(CATALOG.entries)
MINI = "261120090000ARITHMINI"  # 60 samples, one attempt each
ATTEMPTS_RUN = "261120110000NANOIDS3"  # 12 samples x 3 attempts
AGGREGATE_RUN = "261122131250B22YTKVZ"


def rows_of(run_id: str):
    e = CATALOG.entries[run_id]
    return resolve(e.leaf).load_samples(e.native_run_id)


def open_seeds(make_app, run_id: str, **query: str) -> AppTest:
    at = make_app(str(EXAMPLES))
    at.run()
    at.query_params["run"] = run_id
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page("views/seeds.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def grid(at: AppTest):
    return next(d for d in at.dataframe if (d.key or "").startswith("seeds.table."))


def caption(at: AppTest) -> str:
    return next(c.value for c in at.caption if " match · page " in c.value)


@pytest.mark.parametrize("run_id", ALL_RUNS)
def test_every_bundled_run_renders(make_app, run_id):
    at = open_seeds(make_app, run_id)
    assert at.title[0].value == "Per-seed table"
    rows = rows_of(run_id)
    if not rows:
        assert CATALOG.entries[run_id].run.attribution == "aggregate_only"
        assert any("aggregate only" in w.value for w in at.warning)
        return
    assert caption(at).startswith(f"{len(rows)} of {len(rows)} attempts match")
    table = grid(at).value
    assert len(table) == min(len(rows), 50)
    assert table["transcript"].str.startswith(f"/transcript?run={run_id}&sample=").all()


def test_status_and_text_filters_from_the_url(make_app):
    at = open_seeds(make_app, MINI, status="failed", q="dev.1")
    expected = [r.sample_id for r in rows_of(MINI)
                if r.error is None and r.correct is False and "dev.1" in r.sample_id.lower()]
    assert expected  # the example has failures among dev.1, dev.1x
    table = grid(at).value
    assert sorted(table["sample_id"]) == sorted(expected)
    assert (table["status"] == "failed").all()
    assert caption(at).startswith(f"{len(expected)} of 60 attempts match")
    assert at.segmented_control(key="status").value == "failed"
    assert at.text_input(key="q").value == "dev.1"


def test_score_range_sort_and_descending(make_app):
    at = open_seeds(make_app, MINI, smin="0", smax="0.5", sort="sample_id", desc="1")
    scored = [r for r in rows_of(MINI) if r.score is not None and not math.isnan(r.score) and 0 <= r.score <= 0.5]
    table = grid(at).value
    assert len(table) == len(scored)
    assert table["score"].between(0, 0.5).all()
    ids = [r.sample_id for r in sorted(scored, key=lambda r: r.sort_key, reverse=True)]
    assert table["sample_id"].tolist() == ids  # numeric-aware id order, reversed


def test_sort_by_score_covers_the_whole_table(make_app):
    at = open_seeds(make_app, MINI, sort="score", desc="1", size="25")
    table = grid(at).value
    assert len(table) == 25 and (table["score"] == 1.0).all()  # 33 of 60 passed: page 1 is all passes
    at2 = open_seeds(make_app, MINI, sort="score", size="25", page="3")
    assert (grid(at2).value["score"] == 1.0).all()  # ascending: the last page holds the best


def test_paging_from_the_url(make_app):
    at = open_seeds(make_app, MINI, page="2", size="25")
    ids = [r.sample_id for r in sorted(rows_of(MINI), key=lambda r: (r.sort_key, r.attempt))]
    assert grid(at).value["sample_id"].tolist() == ids[25:50]
    assert "page 2 of 3" in caption(at)
    assert at.selectbox(key="size").value == 25


def test_grouped_per_seed_with_k_of_n_and_flaky_filter(make_app):
    at = open_seeds(make_app, ATTEMPTS_RUN, group="1")
    table = grid(at).value
    assert len(table) == 12
    assert table["k_of_n"].str.fullmatch(r"[0-3]/3").all()
    assert caption(at).startswith("12 of 12 seeds match")
    flaky = open_seeds(make_app, ATTEMPTS_RUN, group="1", status="flaky")
    assert len(grid(flaky).value) == 11
    assert at.toggle(key="seeds.group").value is True


def test_attempts_mode_of_a_multi_attempt_run(make_app):
    at = open_seeds(make_app, ATTEMPTS_RUN, q="task_1$", regex="1")
    table = grid(at).value
    assert table["sample_id"].unique().tolist() == ["task_1"]
    assert table["attempt"].tolist() == [0, 1, 2]


def test_bad_regex_is_a_clear_message(make_app):
    at = open_seeds(make_app, MINI, q="dev.(1", regex="1")
    assert "not a valid regular expression" in at.error[0].value
    assert "invalid regular expression" in at.code[0].value
    assert not [d for d in at.dataframe if (d.key or "").startswith("seeds.table.")]


def test_a_catastrophic_regex_is_stopped_with_a_message(make_app, monkeypatch, tmp_path):
    """(a|aa)+$ would hold a server thread for hours in Python's `re`; the page stops it and says why."""
    log = one_sample_log(tmp_path / "slow.jsonl", "261124000000SLOWREGEX", "slow.dev.0",
                         [("error", {"type": "Boom", "message": "a" * 60 + "b"})])
    monkeypatch.setenv("EVALDASH_REGEX_SECONDS", "0.2")
    at = make_app(log)
    at.run()
    at.query_params.update({"run": "261124000000SLOWREGEX", "q": "(a|aa)+$", "regex": "1"})
    at.switch_page("views/seeds.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "took too long" in at.error[0].value
    assert "simplify it" in at.code[0].value


def test_same_text_without_regex_is_plain(make_app):
    at = open_seeds(make_app, MINI, q="dev.(1")
    assert not at.error
    assert caption(at).startswith("0 of 60 attempts match")


def test_selecting_a_row_opens_its_transcript(make_app):
    at = open_seeds(make_app, MINI, status="failed")
    table = grid(at)
    first = table.value.iloc[0]
    at.session_state[table.key] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert at.query_params["sample"] == first["sample_id"]
    assert at.query_params["attempt"] == str(first["attempt"])
    assert at.title[0].value == "Transcript"


def test_a_linked_selection_does_not_navigate(make_app):
    first = sorted(rows_of(MINI), key=lambda r: r.sort_key)[0]
    at = open_seeds(make_app, MINI, sample=first.sample_id, attempt="0")
    assert at.title[0].value == "Per-seed table"


def test_export_buttons(make_app):
    at = open_seeds(make_app, MINI, status="failed")
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Export CSV", "Export JSON"]


def test_aggregate_only_run_explains(make_app):
    at = open_seeds(make_app, AGGREGATE_RUN)
    assert any("aggregate only" in w.value for w in at.warning)


def test_unknown_run(make_app):
    at = open_seeds(make_app, "NO-SUCH-RUN")
    assert "No run with this id" in at.error[0].value


def test_columns_no_row_has_are_hidden(make_app):
    nano = open_seeds(make_app, "261120110000NANOIDS3")  # nanoeval records no rewards, latency or usage
    shown = list(nano.dataframe[0].proto.column_order)
    assert "reward_mean" not in shown and "tokens_total" not in shown
    assert {"sample_id", "attempt", "score", "correct", "error", "transcript"} <= set(shown)
    synth = open_seeds(make_app, "synth-banking77-gpt-4o-mini-2e114df9407b")
    assert {"reward_mean", "latency_ms", "tokens_total"} <= set(synth.dataframe[0].proto.column_order)
