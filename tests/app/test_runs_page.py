"""The Runs page: every run of every source, what failed, and the way to open or compare runs."""

from __future__ import annotations

from tests.conftest import EXAMPLES, FIXTURES


def test_lists_runs_and_what_failed(make_app):
    at = make_app(str(FIXTURES / "mixed_folder"), str(FIXTURES / "evals" / "report_mid_file.jsonl"), "/no/such/log.jsonl")
    at.run()
    assert not at.exception
    table = at.dataframe[0].value
    assert sorted(table["run_id"]) == ["230301120000OLDSPEC1", "261120100000AAAAAAAA", "261120110000MIDREPRT"]
    assert table.set_index("run_id").loc["261120100000AAAAAAAA", "score_mean"] == 0.5
    failed = at.expander[0]
    assert failed.label.startswith("What failed to load (3)")
    text = "\n".join(c.value for c in failed.code)
    assert "notes.txt: skipped: unrecognised input" in text and "no such file or folder" in text


def test_selection_enables_compare(make_app):
    at = make_app(str(FIXTURES / "evals"))
    at.run()
    assert at.button(key="runs.compare").disabled
    at.session_state["runs.table"] = {"selection": {"rows": [0, 1], "columns": [], "cells": []}}
    at.run()
    assert not at.button(key="runs.compare").disabled
    assert at.button(key="runs.open").disabled


def test_bundled_examples_are_the_default(make_app, monkeypatch):
    monkeypatch.delenv("EVALDASH_SOURCES", raising=False)
    at = make_app()
    monkeypatch.delenv("EVALDASH_SOURCES", raising=False)
    at.run()
    assert not at.exception
    assert str(EXAMPLES) in [t.value for t in at.sidebar.text]
    assert len(at.dataframe[0].value) >= 2


def test_warning_text_is_rendered_inert(make_app, tmp_path):
    hostile = tmp_path / "x.jsonl"
    hostile.write_text('{"spec": {"run_id": "261120000000HOSTILE0", "eval_name": "<script>alert(1)</script> $x^2$"}}\n'
                       '<img src=x onerror=alert(1)>\n')
    at = make_app(str(hostile))
    at.run()
    assert not at.exception
    assert all("<script>" not in m.value for m in at.markdown)
