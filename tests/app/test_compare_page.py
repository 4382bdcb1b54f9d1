"""The Compare page: comparability, paired significance, flips, transcripts side by side, bad links.

The p-value on the page is checked against scipy on discordant counts computed here from the
rows themselves, not against the library the page calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats as sps
from streamlit.testing.v1 import AppTest

from dashboard.components.compare import flips_table_key
from loaders.registry import resolve
from tests.conftest import EXAMPLES

MINI, FULL = "261120090000ARITHMINI", "261120100000ARITHFULL"
MINI_FILE, FULL_FILE = EXAMPLES / "compare" / "arith_gpt-4o-mini.jsonl", EXAMPLES / "compare" / "arith_gpt-4o.jsonl"
NANO, NANO_FILE = "261120110000NANOIDS3", EXAMPLES / "recorder" / "nanoeval_with_ids_3_attempts.jsonl"
AGGREGATE_ONLY = "261122131250B22YTKVZ"
PAGE = "views/compare.py"


def open_compare(make_app, *sources: str, **query: str) -> AppTest:
    at = make_app(*sources)
    at.run()  # registers the pages
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def metric(at: AppTest, label: str, nth: int = 0):
    return [m for m in at.metric if m.label == label][nth]


def table(at: AppTest, column: str):
    """The first table with this column (flips: "change", seeds: "k/n · <run>", headlines: "estimate")."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def correct_by_sample(path: Path, run_id: str) -> dict[str, bool]:
    return {r.sample_id: bool(r.correct) for r in resolve(str(path)).load_samples(run_id)}


def discordant() -> tuple[int, int]:
    """(b, c): A passes and B fails, A fails and B passes, from the two bundled runs' rows."""
    a, b = correct_by_sample(MINI_FILE, MINI), correct_by_sample(FULL_FILE, FULL)
    assert set(a) == set(b) and len(a) == 60
    return sum(a[s] and not b[s] for s in a), sum(b[s] and not a[s] for s in a)


def renamed_copy(src: Path, dst: Path, old_run: str, new_run: str, edit=None) -> Path:
    lines = src.read_text().replace(old_run, new_run).splitlines()
    dst.write_text("\n".join(edit(line) if edit else line for line in lines) + "\n")
    return dst


def test_bundled_pair_counts_pvalue_and_verdict(make_app):
    at = open_compare(make_app, str(EXAMPLES / "compare"), runs=f"{MINI},{FULL}", baseline=MINI)
    b, c = discordant()
    assert metric(at, "Samples in both").value == "60"
    assert metric(at, "Only in baseline").value == "0" and metric(at, "Only in this run").value == "0"
    assert metric(at, "Improved").value == str(c) and metric(at, "Regressed").value == str(b)
    assert metric(at, "Unchanged").value == str(60 - b - c)
    expected = sps.binomtest(b, b + c, 0.5).pvalue
    p = metric(at, "p-value")
    assert float(p.help.removeprefix("exact: ")) == pytest.approx(expected, rel=1e-12, abs=0)
    assert float(p.value) == pytest.approx(expected, rel=1e-3)
    assert metric(at, "n used").value == "60"
    assert any("exact McNemar" in cap.value for cap in at.caption)
    assert any("significantly better" in s.value for s in at.success)
    assert not at.warning  # same 60 samples on both sides: nothing to warn about
    headline = table(at, "estimate").set_index("run_id")
    assert headline.loc[MINI, "estimate"] == pytest.approx(sum(correct_by_sample(MINI_FILE, MINI).values()) / 60)
    assert headline.loc[MINI, "low"] < headline.loc[MINI, "estimate"] < headline.loc[MINI, "high"]
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    assert len(specs) == 3  # score with CI, per-seed scatter, delta histogram
    assert at.multiselect(key="compare.runs").value == [MINI, FULL]
    assert at.selectbox(key="compare.baseline").value == MINI


def test_flips_filter_comes_from_the_url(make_app):
    at = open_compare(make_app, str(EXAMPLES / "compare"), runs=f"{MINI},{FULL}", baseline=MINI, flip="regressed")
    b, _c = discordant()
    assert at.segmented_control(key="compare.flip").value == "regressed"
    flips = table(at, "change")
    assert len(flips) == b and set(flips["change"]) == {"regressed"}
    a_ok, b_ok = correct_by_sample(MINI_FILE, MINI), correct_by_sample(FULL_FILE, FULL)
    assert set(flips["sample_id"]) == {s for s in a_ok if a_ok[s] and not b_ok[s]}


def test_selecting_a_flip_shows_both_transcripts_with_the_divergence(make_app):
    at = open_compare(make_app, str(EXAMPLES / "compare"), runs=f"{MINI},{FULL}", baseline=MINI, flip="improved")
    flips = table(at, "change")
    sample = str(flips.iloc[2]["sample_id"])
    at.session_state[flips_table_key(FULL, "improved")] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    assert at.query_params["sample"] == sample and at.query_params["attempt"] == "0"
    answers = []
    for path, run in ((MINI_FILE, MINI), (FULL_FILE, FULL)):
        messages = resolve(str(path)).load_transcript(run, sample, 0).messages
        answers.append(messages[-1].text)
    assert answers[0] != answers[1]
    texts = [t.value for t in at.text]
    assert f"{MINI}\n{sample} · attempt 0" in texts and f"{FULL}\n{sample} · attempt 0" in texts
    assert answers[0] in texts and answers[1] in texts
    assert any("First divergence: message 3" in m.value for m in at.markdown)
    assert len(at.chat_message) == 6  # system, user, assistant in each run, aligned by position


def test_transcripts_deep_link_by_sample(make_app):
    at = open_compare(make_app, str(EXAMPLES / "compare"), runs=f"{MINI},{FULL}", baseline=MINI, sample="arith.dev.12")
    texts = [t.value for t in at.text]
    assert f"{FULL}\narith.dev.12 · attempt 0" in texts
    assert any("First divergence" in m.value for m in at.markdown)


def test_numeric_id_map_pairs_prefixed_and_bare_ids(make_app, tmp_path):
    bare = renamed_copy(FULL_FILE, tmp_path / "bare.jsonl", FULL, "261120120000ARITHBARE",
                        edit=lambda line: line.replace('"sample_id": "arith.dev.', '"sample_id": "'))
    sources = (str(MINI_FILE), str(bare))
    exact = open_compare(make_app, *sources, runs=f"{MINI},261120120000ARITHBARE")
    assert metric(exact, "Samples in both").value == "0"
    assert metric(exact, "Only in baseline").value == "60" and metric(exact, "Only in this run").value == "60"
    assert any("different samples" in w.value for w in exact.warning)
    assert "arith.dev.12" in "\n".join(c.value for c in exact.code)
    assert any("nothing to pair" in e.value for e in exact.error)
    assert not [m for m in exact.metric if m.label == "p-value"]  # no statistic on an empty pairing

    numeric = open_compare(make_app, *sources, runs=f"{MINI},261120120000ARITHBARE", idmap="numeric", sample="12")
    b, c = discordant()
    assert numeric.segmented_control(key="compare.idmap").value == "numeric"
    assert metric(numeric, "Samples in both").value == "60"
    assert metric(numeric, "Improved").value == str(c) and metric(numeric, "Regressed").value == str(b)
    assert "sample_id_b" in table(numeric, "change").columns
    texts = [t.value for t in numeric.text]
    assert "261120120000ARITHBARE\n12 · attempt 0" in texts and f"{MINI}\narith.dev.12 · attempt 0" in texts


def test_three_runs_one_block_each_against_the_baseline(make_app, tmp_path):
    copy = renamed_copy(MINI_FILE, tmp_path / "again.jsonl", MINI, "261120130000ARITHAGAIN")
    at = open_compare(make_app, str(EXAMPLES / "compare"), str(copy), runs=f"{MINI},{FULL},261120130000ARITHAGAIN",
                      baseline=MINI, vs="261120130000ARITHAGAIN")
    assert len([m for m in at.metric if m.label == "p-value"]) == 2
    assert any("Benjamini-Hochberg" in cap.value for cap in at.caption)
    assert any("significantly better" in s.value for s in at.success)
    assert any("Not significant" in i.value for i in at.info)  # identical copy: no discordant pair
    assert at.selectbox(key="compare.vs").value == "261120130000ARITHAGAIN"
    assert metric(at, "Improved").value == "0" and metric(at, "Regressed").value == "0"
    assert len(table(at, "estimate")) == 3


def test_attempts_show_k_of_n_and_flakiness(make_app, tmp_path):
    def fail_task0_attempt1(line: str) -> str:
        record = json.loads(line)
        if record.get("sample_id") == "task_0" and record.get("group_id") == "1":
            line = line.replace('"correct": true', '"correct": false').replace('"score": 1.0', '"score": 0.0')
        return line

    changed = renamed_copy(NANO_FILE, tmp_path / "n4.jsonl", NANO, "261120120000NANOIDS4", edit=fail_task0_attempt1)
    at = open_compare(make_app, str(NANO_FILE), str(changed), runs=f"{NANO},261120120000NANOIDS4", sample="task_0",
                      attempt="1")
    assert metric(at, "Stopped being flaky").value == "1" and metric(at, "Became flaky").value == "0"
    assert "task_0" in [c.value for c in at.code]
    seeds = table(at, f"k/n · {NANO}").set_index("sample_id")
    assert seeds.loc["task_0", f"k/n · {NANO}"] == "1/3" and seeds.loc["task_0", "k/n · 261120120000NANOIDS4"] == "0/3"
    assert any("Wilcoxon" in cap.value for cap in at.caption)
    texts = [t.value for t in at.text]
    assert f"{NANO}\ntask_0 · attempt 1" in texts


@pytest.mark.parametrize("query, shown", [
    ({"runs": f"{MINI},NOPE0000000000000000"}, "NOPE0000000000000000"),
    ({"runs": MINI}, None),
    ({}, None),
    ({"runs": f"{MINI},{AGGREGATE_ONLY}"}, f"{AGGREGATE_ONLY}: reports aggregate counts only (no per-sample rows)"),
])
def test_bad_links_explain_instead_of_crashing(make_app, query, shown):
    at = open_compare(make_app, str(EXAMPLES), **query)
    assert any("at least two runs" in i.value or "Fewer than two" in i.value for i in at.info)
    if shown:
        assert shown in "\n".join(c.value for c in at.code)
    assert not at.get("vega_lite_chart")


def test_bad_parameters_fall_back_with_a_message(make_app):
    at = open_compare(make_app, str(EXAMPLES / "compare"), runs=f"{MINI},{FULL}", baseline="XYZ", alpha="abc",
                      idmap="fuzzy", flip="sideways", sample="no.such.sample")
    warnings = "\n".join(w.value for w in at.warning)
    for needle in ("baseline in the link", "significance level", "id map", "flips filter", "sample chosen in the link"):
        assert needle in warnings
    codes = "\n".join(c.value for c in at.code)
    assert "baseline=XYZ" in codes and "alpha=abc" in codes and "sample=no.such.sample" in codes
    assert at.selectbox(key="compare.baseline").value == MINI
    assert metric(at, "Samples in both").value == "60"


def test_other_alpha_changes_the_intervals_and_the_verdict_threshold(make_app):
    at = open_compare(make_app, str(EXAMPLES / "compare"), runs=f"{MINI},{FULL}", baseline=FULL, alpha="0.0001")
    assert at.selectbox(key="compare.alpha").value == 0.0001
    assert metric(at, "99.99% paired CI").value.startswith("[-")
    assert any("Not significant" in i.value for i in at.info)  # p ≈ 0.0002 > 0.0001


def test_hostile_transcript_text_is_inert(make_app, tmp_path):
    hostile = "<img src=x onerror=alert(1)> $x^2$ ![t](http://evil.example/t.png)"
    copy = renamed_copy(FULL_FILE, tmp_path / "hostile.jsonl", FULL, "261120140000HOSTILE0",
                        edit=lambda line: line.replace('"sampled": ["1548"]', f'"sampled": [{json.dumps(hostile)}]'))
    at = open_compare(make_app, str(MINI_FILE), str(copy), runs=f"{MINI},261120140000HOSTILE0", sample="arith.dev.12")
    assert hostile in [t.value for t in at.text]
    assert all("evil.example" not in m.value and "onerror" not in m.value for m in at.markdown)
    assert all("evil.example" not in m.value for m in [*at.caption, *at.warning, *at.info, *at.success, *at.error])


def test_widgets_write_the_link_back(make_app):
    at = open_compare(make_app, str(EXAMPLES / "compare"), runs=f"{MINI},{FULL}", baseline=MINI, sample="arith.dev.12")
    at.segmented_control(key="compare.flip").set_value("regressed").run()
    assert at.query_params["flip"] == "regressed"
    at.segmented_control(key="compare.idmap").set_value("numeric").run()
    assert at.query_params["idmap"] == "numeric"
    at.selectbox(key="compare.alpha").set_value(0.01).run()
    assert at.query_params["alpha"] == "0.01"
    at.selectbox(key="compare.baseline").set_value(FULL).run()
    assert at.query_params["baseline"] == FULL and "sample" not in at.query_params  # a new pair forgets the old sample
    assert metric(at, "Delta (run − baseline)").value.startswith("-")
    at.multiselect(key="compare.runs").unselect(MINI).run()
    assert at.query_params["runs"] == FULL
    assert any("at least two runs" in i.value for i in at.info)
    assert not at.exception


def test_compare_button_on_the_runs_page_lands_here(make_app):
    at = make_app(str(EXAMPLES / "compare"))
    at.run()
    runs = list(at.dataframe[0].value["run_id"])
    rows = [runs.index(FULL), runs.index(MINI)]
    at.session_state["runs.table"] = {"selection": {"rows": rows, "columns": [], "cells": []}}
    at.run()
    at.button(key="runs.compare").click().run()
    assert not at.exception
    assert at.title[0].value == "Compare runs"
    assert at.selectbox(key="compare.baseline").value == FULL  # the first selected row is the baseline
    assert metric(at, "Improved").value == str(discordant()[0])  # against the bigger model, MINI's wins are "improved"
