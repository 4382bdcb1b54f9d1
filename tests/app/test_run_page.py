"""The run summary page (`/run?run=ID`): renders for every bundled run; honest figures, checked against scipy."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats as sps
from streamlit.testing.v1 import AppTest

from loaders.catalog import build_catalog
from loaders.registry import resolve
from tests.conftest import EXAMPLES, FIXTURES

CATALOG = build_catalog([str(EXAMPLES)])
ALL_RUNS = sorted(CATALOG.entries)
ATTEMPTS_RUN = "261120110000NANOIDS3"  # 12 samples x 3 attempts
AGGREGATE_RUN = "261122131250B22YTKVZ"  # interleaved nanoeval log without sample ids


def open_run(make_app, run_id: str, *sources: str) -> AppTest:
    at = make_app(*(sources or (str(EXAMPLES),)))
    at.run()
    at.query_params["run"] = run_id
    at.switch_page("views/run.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def figures(at: AppTest) -> dict:
    """The page's "All figures as JSON" block: what every number on the page was drawn from."""
    for element in at.json:
        value = json.loads(element.value)
        if isinstance(value, dict) and "headline" in value:
            return value
    raise AssertionError("no figures JSON on the page")


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def scipy_reference(run_id: str) -> tuple[float, float, float, int]:
    """Wilson interval straight from scipy, on counts taken from the loader (not from evaldash's stats)."""
    e = CATALOG.entries[run_id]
    rows = resolve(e.leaf).load_samples(e.native_run_id)
    if not rows and e.run.attribution == "aggregate_only":
        k, n = e.run.aggregates["match_correct"], e.run.aggregates["match_events"]
    else:
        graded = [r.score for r in rows if not r.is_system_error and r.score is not None and not math.isnan(r.score)]
        assert graded and set(graded) <= {0.0, 1.0}, "the bundled runs are pass/fail"
        k, n = sum(1 for s in graded if s == 1.0), len(graded)
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return k / n, ci.low, ci.high, n


@pytest.mark.parametrize("run_id", ALL_RUNS)
def test_every_bundled_run_renders_with_scipy_headline(make_app, run_id):
    kinds = {e.run.source_kind for e in CATALOG.entries.values()}
    assert {"recorder", "synth"} <= kinds  # every source kind bundled in examples/
    at = open_run(make_app, run_id)
    assert at.title[0].value == "Run summary"
    estimate, low, high, n = scipy_reference(run_id)
    headline = figures(at)["headline"]
    assert headline["method"] == "Wilson score interval"
    assert headline["n"] == n
    assert headline["estimate"] == pytest.approx(estimate, abs=1e-12)
    assert headline["low"] == pytest.approx(low, abs=1e-12)
    assert headline["high"] == pytest.approx(high, abs=1e-12)
    assert metric(at, "Score") == f"{estimate:.3f}"
    assert metric(at, "95% CI") == f"{low:.3f} – {high:.3f}"


def test_pass_at_k_and_flaky_share_for_attempts(make_app):
    at = open_run(make_app, ATTEMPTS_RUN)
    assert any(h.value.startswith("pass@k (up to 3 attempts") for h in at.subheader)
    table = next(d.value for d in at.dataframe if "pass_at_k" in d.value.columns)
    assert table["k"].tolist() == [1, 2, 3]
    assert table["pass_at_k"].is_monotonic_increasing
    assert table.loc[0, "pass_at_k"] == pytest.approx(19 / 36)  # pass@1 = mean over attempts when all have 3
    assert metric(at, "Attempts") == "36" and metric(at, "Samples") == "12"
    assert metric(at, "Flaky samples") == "91.7%"


def test_single_attempt_run_has_no_pass_at_k(make_app):
    at = open_run(make_app, "261120090000ARITHMINI")
    assert not any(h.value.startswith("pass@k") for h in at.subheader)
    assert figures(at)["pass_at_k"] == []


def test_error_aware_and_inclusive_both_labelled(make_app):
    at = open_run(make_app, "synth-banking77-gpt-4o-mini-2e114df9407b")  # one seed failed with a system error
    table = next(d.value for d in at.dataframe if "figure" in d.value.columns and "meaning" in d.value.columns)
    assert table["figure"].tolist() == ["Error-aware", "Error-inclusive"]
    assert table["meaning"].str.contains("system errors").all()
    aware, incl = table["score"].tolist()
    assert aware == pytest.approx(0.5) and incl == pytest.approx(1 / 3)


def test_unknown_usage_is_unknown_not_zero(make_app):
    at = open_run(make_app, ATTEMPTS_RUN)  # the nanoeval log records no usage
    usage = next(d.value for d in at.dataframe if "figure" in d.value.columns and "p95" in d.value.columns)
    assert (usage[["total", "mean", "p50", "p95"]] == "unknown").all().all()
    assert (usage["missing"] == 36).all()


def test_aggregate_only_run_shows_aggregates_and_warning(make_app):
    at = open_run(make_app, AGGREGATE_RUN)
    assert any("aggregate only" in w.value for w in at.warning)
    assert not any(h.value.startswith("Finish reasons") for h in at.subheader)
    assert figures(at)["headline"]["from_aggregates"] is True
    assert any(json.loads(j.value) == {"match_events": 4, "match_correct": 2, "n_error_records": 2,
                                       "errors_by_text": {"simulated infra failure": 2}, "n_sample_completed": 4}
               for j in at.json)
    warnings = "\n".join(c.value for c in at.code)
    assert "nanoeval_generated_agent_full_no-retry.jsonl: This nanoeval log has no sample IDs" in warnings


def test_report_mismatch_is_flagged_with_reason(make_app):
    fixture = FIXTURES / "nanoeval" / "generated_one-line-per-kind.jsonl"
    at = open_run(make_app, "261122131250B22YTKVZ", str(fixture))
    assert any("differ" in w.value for w in at.warning)
    assert any(t.value.startswith("Reason: ") and "error-inclusive figure matches" in t.value for t in at.text)


def test_finish_reasons_with_example_error_and_transcript_link(make_app):
    at = open_run(make_app, "synth-banking77-gpt-4o-mini-2e114df9407b")
    errors = next(d.value for d in at.dataframe if "error_kind" in d.value.columns)
    assert errors["count"].sum() == 1
    assert errors["transcript"].str.startswith("/transcript?run=synth-banking77-gpt-4o-mini-2e114df9407b&sample=").all()
    assert any("Per-seed table" in (p.proto.label or "") for p in at.get("page_link"))


def test_unknown_run_is_a_message_not_a_crash(make_app):
    at = open_run(make_app, "NO-SUCH-RUN")
    assert "No run with this id" in at.error[0].value
    assert at.code[0].value == "NO-SUCH-RUN"


def test_no_run_chosen(make_app):
    at = make_app(str(EXAMPLES))
    at.run()
    at.switch_page("views/run.py").run()
    assert not at.exception
    assert "pick one on the Runs page" in at.info[0].value


def test_hostile_text_is_inert(make_app):
    at = open_run(make_app, "261123090000HOSTILE1", str(FIXTURES / "hostile"))
    for element in [*at.markdown, *at.caption, *at.warning, *at.error, *at.info, *at.success]:
        assert "<script" not in element.value and "<img" not in element.value and "$" not in element.value
