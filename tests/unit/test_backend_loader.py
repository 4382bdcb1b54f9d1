"""BackendLoader over real HTTP against the fake backend: listing, statuses, results, traces, a running job, stale data."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from loaders.backend_client import BackendConnectError, BackendNotFound, BackendUnavailable
from loaders.errors import UnknownSample
from loaders.registry import resolve, split_kind
from loaders.schema import Message
from loaders.sources.backend import BackendLoader, normalise_status, result_rows, split_source, summary_mismatches
from tests.conftest_backend import KEY, Fake, closed_port

Factory = Callable[..., BackendLoader]
NEWEST_FIRST = ["eval-live000001", "eval-0a1b2c3d4e", "eval-9d4e6f1a20", "eval-5b2a88c0de", "eval-7c1d0e9f42", "eval-3f9c1a2b7d"]


def test_registry_picks_backend_for_urls(fake: Fake) -> None:
    assert isinstance(resolve(fake.url), BackendLoader)
    assert split_kind("backend:http://127.0.0.1:8000") == ("backend", "http://127.0.0.1:8000")
    assert split_source("http://h:1/api#a, b,a,") == ("http://h:1/api", ["a", "b"])


@pytest.mark.parametrize(("body", "expected"), [
    ({"status": "pending"}, ("pending", None)), ({"status": " Queued "}, ("pending", None)),
    ({"status": "running"}, ("running", None)), ({"status": "IN_PROGRESS"}, ("running", None)),
    ({"status": "completed"}, ("completed", None)), ({"status": "succeeded"}, ("completed", None)),
    ({"status": "success"}, ("completed", None)), ({"status": "failed"}, ("failed", None)), ({"status": "error"}, ("failed", None)),
    ({"status": "cancelled"}, ("cancelled", None)), ({"state": "canceled"}, ("cancelled", None)),
    ({"status": "paused"}, ("pending", "paused")), ({}, ("pending", "missing")),
])
def test_status_spellings(body: dict, expected: tuple) -> None:
    assert normalise_status(body) == expected


def test_list_pages_newest_first_with_statuses_normalised(fake: Fake, make_loader: Factory) -> None:
    loader = make_loader()
    loader.page_size = 2
    listing = loader.list_runs()
    assert [r.run_id for r in listing.runs] == NEWEST_FIRST
    assert fake.requests("/api/eval/jobs") == 3  # 6 jobs, pages of 2
    assert listing.warnings == ()
    runs = {r.run_id: r for r in listing.runs}
    assert {k: r.status for k, r in runs.items()} == {
        "eval-live000001": "running", "eval-0a1b2c3d4e": "pending", "eval-9d4e6f1a20": "completed",
        "eval-5b2a88c0de": "cancelled", "eval-7c1d0e9f42": "failed", "eval-3f9c1a2b7d": "completed"}
    done = runs["eval-3f9c1a2b7d"]
    assert (done.progress_completed, done.progress_total) == (3, 3)
    assert done.created_at.isoformat() == "2025-11-22T13:08:00+00:00"
    assert done.started_at.isoformat() == "2025-11-22T13:08:01+00:00"
    assert done.completed_at.isoformat() == "2025-11-22T13:08:41+00:00"
    assert done.reported_metrics == {"completed": 3, "total": 3, "mean_score": 0.5}
    assert done.report_label == "backend summary"
    assert done.model == "gpt-4o-mini" and done.eval_name == "banking77" and done.source_kind == "backend"
    assert done.location == f"{fake.url}/api/eval/jobs/eval-3f9c1a2b7d"
    queued = runs["eval-0a1b2c3d4e"]
    assert (queued.progress_completed, queued.progress_total) == (None, 5)  # no results object: total from config.seeds
    assert runs["eval-7c1d0e9f42"].status_detail == "task app unreachable: http://localhost:8103/health returned 502"
    assert runs["eval-9d4e6f1a20"].config["task_app_api_key"] == "****7788"  # redacted


def test_list_status_filter(make_loader: Factory) -> None:
    assert [r.run_id for r in make_loader(status="completed").list_runs().runs] == ["eval-9d4e6f1a20", "eval-3f9c1a2b7d"]


@pytest.mark.parametrize("mode", ["no_list", "list_405"])
def test_list_not_supported_falls_back_to_explicit_ids(fake: Fake, make_loader: Factory, mode: str) -> None:
    fake.fault(mode)
    loader = make_loader(f"{fake.url}#eval-3f9c1a2b7d,eval-5b2a88c0de")
    listing = loader.list_runs()
    assert [r.run_id for r in listing.runs] == ["eval-5b2a88c0de", "eval-3f9c1a2b7d"]
    assert listing.warnings == ()  # no error banner
    assert loader.list_supported is False
    loader.list_runs()
    assert fake.requests("/api/eval/jobs") == 1  # not asked again


def test_list_not_supported_without_ids_asks_for_them(fake: Fake, make_loader: Factory) -> None:
    fake.fault("no_list")
    loader = make_loader()
    listing = loader.list_runs()
    assert listing.runs == ()
    assert [(w.code, w.message) for w in listing.warnings] == [(
        "no_job_ids", f"this backend has no job list (GET {fake.url}/api/eval/jobs is not supported); "
                      f"name job ids as {fake.url}#job_id,... or in the sidebar")]
    loader.add_job_ids(["eval-7c1d0e9f42", "eval-missing"])
    listing = loader.list_runs()
    assert [r.run_id for r in listing.runs] == ["eval-7c1d0e9f42"]
    assert [w.code for w in listing.warnings] == ["no_such_job"]
    assert listing.warnings[0].message.startswith("no such job eval-missing on ")


def test_results_0_4_4_spelling(make_loader: Factory) -> None:
    loader = make_loader()
    loader.list_runs()
    rows = loader.load_samples("eval-3f9c1a2b7d")
    assert [(r.sample_id, r.score, r.tokens_total, r.error) for r in rows] == [
        ("0", 1.0, 412, None), ("1", 0.0, 398, None), ("2", None, None, "ReadTimeout: timed out")]
    assert rows[1].verifier_score == 0.25 and rows[0].metrics["score_key"] == "score"
    assert rows[2].error_kind == "ReadTimeout" and rows[2].finish_reason == "error"
    run = loader.job_status("eval-3f9c1a2b7d")
    assert run.reported_metrics["num_successful"] == 2 and run.report_label == "backend summary"
    assert run.warnings == ()  # summary agrees with the rows


def test_results_later_spelling(make_loader: Factory) -> None:
    loader = make_loader()
    rows = loader.load_samples("eval-9d4e6f1a20")
    assert [(r.sample_id, r.score) for r in rows] == [("0", 1.0), ("1", 0.0), ("2", None)]
    assert rows[0].metrics["trace_id"] == "trace_abc123" and rows[0].metrics["outcome_reward"] == 1.0
    assert rows[0].metrics["trajectory"]["run_id"] == "banking77-seed-0-1a2b3c4d"
    assert loader.job_status("eval-9d4e6f1a20").reported_metrics["mean_reward"] == 0.5


def test_results_rules_without_a_server() -> None:
    body = {"status": "completed", "summary": {"mean_reward": 0.9, "num_seeds": 3},
            "results": {"items": [{"seed": 5, "outcome_reward": 0.0}, {"outcome_score": 1.0}, {"seed": 1, "reward_mean": 0.5}]}}
    rows, summary, warnings = result_rows("j", body)
    assert [(r.sample_id, r.score, r.metrics.get("score_key")) for r in rows] == [
        ("1", 0.5, "reward_mean"), ("5", 0.0, "outcome_reward"), ("seed unknown", 1.0, "outcome_score")]
    assert [w.code for w in warnings] == ["seed_unknown"]
    assert [w.message for w in summary_mismatches(summary or {}, rows)] == ["backend summary says mean_reward = 0.9, the rows give 0.5"]
    assert result_rows("j", {"results": "nope"})[2][0].code == "unexpected_results"
    assert result_rows("j", {"mean_score": 0.0, "results": []})[1] == {"mean_score": 0.0}  # 0.0 kept (key presence)


def test_results_not_ready_409(make_loader: Factory) -> None:
    loader = make_loader()
    loader.list_runs()
    assert loader.load_samples("eval-0a1b2c3d4e") == []
    [warning] = loader.job_status("eval-0a1b2c3d4e").warnings
    assert warning.code == "results_not_ready"
    assert warning.message.startswith("no rows yet: results of job eval-0a1b2c3d4e not ready yet (HTTP 409 at ")


def test_traces_zip_to_transcript_fetched_once(fake: Fake, make_loader: Factory) -> None:
    loader = make_loader()
    loader.list_runs()
    rows = loader.load_samples("eval-3f9c1a2b7d")
    assert fake.requests("/api/eval/jobs/eval-3f9c1a2b7d/traces") == 0  # only when a transcript opens
    transcript = loader.load_transcript("eval-3f9c1a2b7d", "0")
    assert transcript.run_id == "eval-3f9c1a2b7d" and transcript.sample_id == "0"
    texts = [m.text for m in transcript.items if isinstance(m, Message)]
    assert any("I still have not received my new card" in t for t in texts)
    assert transcript.grade.score == rows[0].score == 1.0
    loader.load_transcript("eval-3f9c1a2b7d", "1")
    with pytest.raises(UnknownSample, match="no trace for seed 2"):
        loader.load_transcript("eval-3f9c1a2b7d", "2")  # the errored seed has no trace: normal
    assert fake.requests("/api/eval/jobs/eval-3f9c1a2b7d/traces") == 1  # terminal: never refetched
    assert [r.has_transcript for r in loader.load_samples("eval-3f9c1a2b7d")] == [True, True, False]
    full = loader.load_transcript("eval-9d4e6f1a20", "1")  # full SessionTrace template, per-seed content
    assert any("top up my account" in m.text for m in full.messages)


def test_no_traces_for_job(make_loader: Factory) -> None:
    loader = make_loader()
    with pytest.raises(BackendNotFound) as info:
        loader.load_transcript("eval-7c1d0e9f42", "0")
    assert info.value.detail.startswith("no traces for this job (eval-7c1d0e9f42) on ")
    assert all(not r.has_transcript for r in loader.load_samples("eval-7c1d0e9f42"))


def test_running_job_advances_then_completes(fake: Fake, make_loader: Factory) -> None:
    loader = make_loader()
    loader.list_seconds = 1e9  # keep the list bucket out of this test's version tokens
    job = "eval-live000001"
    run = {r.run_id: r for r in loader.list_runs().runs}[job]
    assert (run.status, run.progress_completed, run.progress_total) == ("running", 0, 6)
    fake.advance(2)
    run = loader.job_status(job)
    assert (run.status, run.progress_completed) == ("running", 2)
    rows = loader.load_samples(job)
    assert [r.sample_id for r in rows] == ["0", "1"] and all("partial" in r.flags for r in rows)
    run = loader.job_status(job)
    assert run.report_label == "partial backend summary"
    assert [w.message for w in run.warnings] == ["job is running: 2 of 6 rows so far (partial)"]
    assert len(loader.load_transcript(job, "1").messages) > 0
    fake.advance(10)
    run = loader.job_status(job)
    assert (run.status, run.progress_completed, run.completed_at is not None) == ("completed", 6, True)
    rows = loader.load_samples(job)
    assert len(rows) == 6 and not any("partial" in r.flags for r in rows)
    assert loader.job_status(job).warnings == () and loader.job_status(job).report_label == "backend summary"
    loader.load_transcript(job, "5")  # progress moved: the zip is fetched again, now with every seed
    before = fake.requests(f"/api/eval/jobs/{job}/results"), fake.requests(f"/api/eval/jobs/{job}/traces")
    loader.load_samples(job)
    loader.load_transcript(job, "4")
    assert (fake.requests(f"/api/eval/jobs/{job}/results"), fake.requests(f"/api/eval/jobs/{job}/traces")) == before
    loader.list_runs()
    assert loader.version() == loader.version()  # all terminal: stable


def test_running_job_advances_with_wall_time(fake: Fake, make_loader: Factory) -> None:
    fake.reset(seconds_per_seed=0.1)
    loader = make_loader()
    first = loader.job_status("eval-live000001").progress_completed or 0
    time.sleep(0.35)
    assert (loader.job_status("eval-live000001").progress_completed or 0) >= first + 2


def test_version_moves_while_a_job_runs(make_loader: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    loader = make_loader()
    loader.list_seconds = 1e9
    loader.list_runs()
    now = [1000.0]
    monkeypatch.setattr("loaders.sources.backend.time.time", lambda: now[0])
    token = loader.version()
    now[0] += loader.poll_seconds
    assert loader.version() != token  # a running job: the cache expires every poll interval


def test_stale_data_kept_when_backend_fails(fake: Fake, make_loader: Factory) -> None:
    loader = make_loader()
    loader.list_runs()
    fake.advance(1)
    rows = loader.load_samples("eval-live000001")
    fake.fault("500")
    listing = loader.list_runs()
    assert [r.run_id for r in listing.runs] == NEWEST_FIRST
    assert listing.warnings[0].code == "stale"
    stale = [w for w in listing.runs[0].warnings if w.code == "stale"]
    assert len(stale) == 1 and stale[0].message.startswith("stale since 20")
    assert "backend unavailable: " in stale[0].message and "after 3 tries (HTTP 500 at " in stale[0].message
    assert loader.load_samples("eval-live000001") == rows  # cached rows, not an error
    assert any(w.code == "stale" for w in loader.job_status("eval-live000001").warnings)
    fake.reset()
    assert all(w.code != "stale" for w in loader.job_status("eval-live000001").warnings)


def test_nothing_loaded_yet_errors_propagate(fake: Fake, make_loader: Factory) -> None:
    fake.fault("500")
    with pytest.raises(BackendUnavailable):
        make_loader().list_runs()
    with pytest.raises(BackendConnectError, match="connection refused"):
        make_loader(f"http://127.0.0.1:{closed_port()}").list_runs()


def test_api_key_never_in_runs_rows_warnings_or_errors(fake: Fake, make_loader: Factory) -> None:
    texts: list[str] = []
    loader = make_loader()
    texts.append(repr(loader))
    listing = loader.list_runs()
    for run in listing.runs:
        loader.load_samples(run.run_id)
        texts.append(loader.job_status(run.run_id).model_dump_json())
        texts += [r.model_dump_json() for r in loader.load_samples(run.run_id)]
    texts.append(loader.load_transcript("eval-3f9c1a2b7d", "0").model_dump_json())
    for mode in ("500", "401", "403", "malformed", "no_list"):
        fake.fault(mode)
        try:
            listing = loader.list_runs()
            texts += [listing.model_dump_json()]
            texts += [loader.job_status("eval-3f9c1a2b7d").model_dump_json()]
        except Exception as exc:  # noqa: BLE001 - every message is checked
            texts += [str(exc), repr(exc)]
    fake.reset()
    bad = make_loader(api_key=KEY + "-wrong")
    with pytest.raises(Exception) as info:
        bad.list_runs()
    texts += [str(info.value), repr(bad)]
    for text in texts:
        assert KEY not in text


def test_cli_summary_reads_a_backend(fake: Fake, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from loaders.cli import main

    monkeypatch.setenv("SYNTH_API_KEY", KEY)
    assert main(["summary", fake.url]) == 0
    out = capsys.readouterr().out
    assert all(job in out for job in NEWEST_FIRST)
    monkeypatch.setenv("SYNTH_API_KEY", "sk-wrong-key-00001111")
    assert main(["summary", fake.url]) == 1
    assert "was refused (HTTP 401 at " in capsys.readouterr().err


def test_explicit_ids_join_a_listing_backend(fake: Fake, make_loader: Factory) -> None:
    listing = make_loader(f"{fake.url}#eval-3f9c1a2b7d,eval-gone").list_runs()
    assert [r.run_id for r in listing.runs] == NEWEST_FIRST  # listed once, not twice
    assert [w.code for w in listing.warnings] == ["no_such_job"]


def test_figures_of_every_job_cost_no_second_listing(fake: Fake, make_loader: Factory) -> None:
    """The Runs page asks for each run's figures: with the header it already holds, the backend is not listed again."""
    from loaders import query

    loader = make_loader()
    runs = loader.list_runs().runs
    listed = fake.requests("/api/eval/jobs")
    done = next(r for r in runs if r.run_id == "eval-3f9c1a2b7d")
    figures = loader.load_figures(done.run_id, done)
    assert figures == query.row_figures(done, loader.load_samples(done.run_id))
    assert figures["n_attempts"] == 3
    assert fake.requests("/api/eval/jobs") == listed
