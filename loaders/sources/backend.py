"""A synth eval-jobs backend as a source: every job a run, live while it runs.

Source syntax: `http://host:port` (jobs listed with `GET /api/eval/jobs`) or
`http://host:port#job_a,job_b` (explicit ids, for 0.4.4 backends that have no list
endpoint). Spec: shared/formats/synth-backend-api.md (§4 status, §5 results, §7 listing, §8).

Costs follow the loader contract: `list_runs` is one paged list call (or one status call per
named job), `load_samples` one `/results` call, and the traces ZIP is fetched only when a
transcript is opened. Terminal jobs' results and traces are kept in the loader and never
fetched again; running jobs are refetched. When a request fails after data was loaded,
the old data stays and the run carries a "stale since <time>" warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from loaders.backend_client import (
    BackendBadResponse,
    BackendClient,
    BackendError,
    BackendHTTPError,
    BackendNotFound,
    BackendNotReady,
    display_url,
)
from loaders.base import Loader
from loaders.errors import UnknownSample
from loaders.redact import redact
from loaders.registry import register
from loaders.schema import LoadWarning, Run, RunStatus, SampleRow, SourceListing, Transcript
from loaders.timestamps import parse_timestamp

DIALECT = "synth-backend"
REPORT_LABEL = "backend summary"
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
_STATUS: dict[str, RunStatus] = {
    "pending": "pending", "queued": "pending",
    "running": "running", "in_progress": "running",
    "completed": "completed", "succeeded": "completed", "success": "completed",
    "failed": "failed", "error": "failed",
    "cancelled": "cancelled", "canceled": "cancelled",
}
SCORE_KEYS = ("score", "outcome_reward", "outcome_score", "reward_mean")
ROW_KEYS = {"seed", "score", "reward_mean", "outcome_score", "events_score", "latency_ms", "verifier_score", "tokens",
            "cost_usd", "error"}
UNKNOWN_SEED = "seed unknown"
_ERROR_KIND = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Timeout|Interrupt)?):")


# ---- pure parsing (§4, §5, §7) ----------------------------------------------------------------


def split_source(source: str) -> tuple[str, list[str]]:
    """`URL#job_a,job_b` -> (URL, [job_a, job_b]); ids de-duplicated in order."""
    url, _sep, fragment = source.partition("#")
    ids: list[str] = []
    for part in fragment.split(","):
        job_id = part.strip()
        if job_id and job_id not in ids:
            ids.append(job_id)
    return url, ids


def normalise_status(body: dict[str, Any]) -> tuple[RunStatus, str | None]:
    """§4: `status` or `state`, stripped and lower-cased; unknown or missing -> pending, with the raw value."""
    raw = body.get("status") or body.get("state")
    word = str(raw).strip().lower() if raw is not None else ""
    if word in _STATUS:
        return _STATUS[word], None
    return "pending", (str(raw) if raw is not None else "missing")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def list_items(data: Any) -> tuple[list[Any], int | None] | None:
    """§7: a bare list, or `{"jobs"|"items"|"data": [...]}`; None for any other shape."""
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict):
        for key in ("jobs", "items", "data"):
            if isinstance(data.get(key), list):
                return data[key], _int(data.get("total"))
    return None


def job_to_run(body: dict[str, Any], *, source: str, location: str) -> Run:
    """One status body (or list item) -> a Run header; the config is redacted."""
    job_id = str(body.get("job_id"))
    status, raw = normalise_status(body)
    config = body.get("config") if isinstance(body.get("config"), dict) else {}
    policy = config.get("policy") if isinstance(config.get("policy"), dict) else {}
    results = body.get("results") if isinstance(body.get("results"), dict) else None
    seeds = config.get("seeds") if isinstance(config.get("seeds"), list) else None
    completed = _int(results.get("completed")) if results else None
    total = _int(results.get("total")) if results else None
    if total is None and seeds is not None:
        total = len(seeds)
    eval_name = config.get("app_id") or config.get("env_name")
    model = policy.get("model") or config.get("model")
    warnings: list[LoadWarning] = []
    details: list[str] = []
    if raw is not None:
        details.append(f"backend status {raw!r}")
        warnings.append(LoadWarning(code="unknown_status", message=f"status {raw!r} is not one evaldash knows; shown as pending"))
    if body.get("error"):
        details.append(str(redact(str(body["error"]))))
    return Run(
        run_id=job_id, source=source, source_kind="backend", location=location,
        display_name=f"{eval_name or 'eval'} · {model or 'unknown model'} · {job_id}",
        eval_name=str(eval_name) if eval_name else None, model=str(model) if model else None,
        created_at=parse_timestamp(body.get("created_at")), started_at=parse_timestamp(body.get("started_at")),
        completed_at=parse_timestamp(body.get("completed_at")),
        status=status, status_detail="; ".join(details) or None, dialect=DIALECT,
        config=redact(config), reported_metrics=redact(results) if results else {},
        report_label=REPORT_LABEL if results else None, attribution="seed", has_sample_ids=True,
        progress_completed=completed, progress_total=total, warnings=tuple(warnings),
    )


def result_rows(job_id: str, body: Any, *, partial: bool = False) -> tuple[list[SampleRow], dict[str, Any] | None, list[LoadWarning]]:
    """§5: rows (list or `{"items": [...]}`) sorted by seed, the summary (either spelling), warnings."""
    warnings: list[LoadWarning] = []
    if not isinstance(body, dict):
        return [], None, [LoadWarning(code="unexpected_results", message="results body is not an object; no rows")]
    raw_rows = body.get("results")
    if isinstance(raw_rows, dict) and isinstance(raw_rows.get("items"), list):
        raw_rows = raw_rows["items"]
    if not isinstance(raw_rows, list):
        warnings.append(LoadWarning(code="unexpected_results",
                                    message=f"`results` is {type(raw_rows).__name__}, not a list or {{'items': [...]}}; no rows"))
        raw_rows = []
    rows: list[SampleRow] = []
    unknown = 0
    for index, item in enumerate(raw_rows):
        if not isinstance(item, dict):
            warnings.append(LoadWarning(code="skipped_row", message=f"result #{index} is not an object; skipped"))
            continue
        seed = _int(item.get("seed"))
        if seed is None:
            unknown += 1
            sample_id = UNKNOWN_SEED if unknown == 1 else f"{UNKNOWN_SEED} ({unknown})"
        else:
            sample_id = str(seed)
        rows.append(_row(job_id, sample_id, seed, item, partial))
    if unknown:
        warnings.append(LoadWarning(code="seed_unknown", message=f"{unknown} result row(s) have no seed; kept as {UNKNOWN_SEED!r}"))
    dupes = len(rows) - len({r.sample_id for r in rows})
    if dupes:
        warnings.append(LoadWarning(code="duplicate_seed", message=f"{dupes} result row(s) repeat a seed; the last one wins"))
        rows = list({r.sample_id: r for r in rows}.values())
    rows.sort(key=lambda r: r.sort_key)
    summary = body.get("summary") if isinstance(body.get("summary"), dict) else None
    if summary is not None and "mean_score" not in summary and "mean_reward" not in summary and "mean_score" in body:
        summary = {**summary, "mean_score": body["mean_score"]}
    elif summary is None and "mean_score" in body:
        summary = {"mean_score": body["mean_score"]}
    return rows, summary, warnings


def _row(job_id: str, sample_id: str, seed: int | None, item: dict[str, Any], partial: bool) -> SampleRow:
    score_key = next((k for k in SCORE_KEYS if _num(item.get(k)) is not None), None)
    error = item.get("error")
    error_text = str(redact(str(error))) if error not in (None, "") else None
    kind = None
    if error_text:
        match = _ERROR_KIND.match(error_text)
        kind = match.group(1) if match else "error"
    metrics = {k: v for k, v in item.items() if k not in ROW_KEYS}
    if score_key:
        metrics["score_key"] = score_key
    flags = ("partial",) if partial else ()
    if seed is None:
        flags += ("seed_unknown",)
    return SampleRow(
        run_id=job_id, sample_id=sample_id, attempt=0, sort_key=(seed if seed is not None else 1 << 62, sample_id),
        score=_num(item.get(score_key)) if score_key else None, correct_rule=f"results.{score_key}" if score_key else None,
        reward_mean=_num(item.get("reward_mean")), outcome_score=_num(item.get("outcome_score")),
        events_score=_num(item.get("events_score")), verifier_score=_num(item.get("verifier_score")),
        latency_ms=_num(item.get("latency_ms")), tokens_total=_int(item.get("tokens")), cost_usd=_num(item.get("cost_usd")),
        error=error_text, error_kind=kind, finish_reason="error" if error_text else None,
        attribution="seed", has_transcript=seed is not None, flags=flags, metrics=redact(metrics),
    )


def summary_mismatches(summary: dict[str, Any], rows: list[SampleRow]) -> list[LoadWarning]:
    """§5: recompute mean, counts and totals from the rows; one warning per disagreement."""
    scores = [r.score for r in rows if r.score is not None]
    tokens = [r.tokens_total for r in rows if r.tokens_total is not None]
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    n_err = sum(1 for r in rows if r.error is not None)
    ours: dict[str, float | None] = {
        "mean_score": sum(scores) / len(scores) if scores else None,
        "mean_reward": sum(scores) / len(scores) if scores else None,
        "num_seeds": len(rows), "completed": len(rows), "num_successful": len(rows) - n_err, "num_failed": n_err,
        "total_tokens": sum(tokens) if tokens else None, "total_cost_usd": sum(costs) if costs else None,
    }
    mean_key = next((k for k in ("mean_score", "mean_reward") if k in summary), None)
    out = []
    for key, mine in ours.items():
        if key not in summary or (key == "mean_reward" and mean_key != "mean_reward"):
            continue
        theirs = summary[key]
        if theirs is None and mine is None:
            continue
        if key in ("total_tokens", "total_cost_usd") and theirs in (0, None) and mine is None:
            continue
        if isinstance(theirs, int | float) and mine is not None and math.isclose(theirs, mine, rel_tol=1e-6, abs_tol=1e-9):
            continue
        shown = f"{mine:.6g}" if isinstance(mine, float) else str(mine)
        out.append(LoadWarning(code="summary_mismatch", message=f"backend summary says {key} = {theirs}, the rows give {shown}"))
    return out


# ---- the loader ---------------------------------------------------------------------------


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class _Job:
    """What the loader holds for one job between reruns."""

    run: Run | None = None  # from the last good status/list body, before decoration
    rows: list[SampleRow] | None = None
    rows_final: bool = False  # rows of a terminal job: never refetched
    summary: dict[str, Any] | None = None
    traces: dict[int, dict[str, Any]] | None = None
    traces_warnings: list[LoadWarning] = field(default_factory=list)
    traces_progress: int | None = None  # progress when the zip was fetched (running jobs refetch when it moves)
    traces_final: bool = False
    no_traces: bool = False
    row_notes: list[LoadWarning] = field(default_factory=list)  # from the last /results body (mismatch, seed unknown, ...)
    notes: dict[str, LoadWarning] = field(default_factory=dict)  # by code: partial_results, results_not_ready, stale
    loaded_at: datetime | None = None  # last successful read of this job: what "stale since" reports


@register
class BackendLoader(Loader):
    kind = "backend"
    label = "synth backend"

    page_size = 50
    max_jobs = 2000
    poll_seconds = 5.0  # version() moves at most this often while a job runs (spec §8: poll no more than every 5 s)
    list_seconds = 60.0  # ... and this often for a listing backend, so new jobs show up

    def __init__(
        self,
        source: str,
        *,
        api_key: str | None = None,
        name: str | None = None,
        job_ids: list[str] | None = None,
        status: str | None = None,
        transport: httpx.BaseTransport | None = None,
        tries: int = 3,
        backoff: float = 1.0,
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        zip_timeout: float = 60.0,
    ) -> None:
        url, ids = split_source(source)
        super().__init__(display_url(url) + (f"#{','.join(ids)}" if ids else ""))
        self.job_ids: list[str] = ids
        self.add_job_ids(job_ids or [])
        self.status_filter = status
        self.client = BackendClient(url, api_key, name=name, transport=transport, tries=tries, backoff=backoff,
                                    connect_timeout=connect_timeout, read_timeout=read_timeout, zip_timeout=zip_timeout)
        self._lock = threading.RLock()
        self._jobs: dict[str, _Job] = {}
        self._order: list[str] = []  # newest first, as last listed
        self._list_supported: bool | None = None
        self._last_ok: datetime | None = None

    def __repr__(self) -> str:
        return f"BackendLoader({self.source!r}, key={self.client.key_hint})"

    @classmethod
    def handles(cls, source: str) -> bool:
        return source.startswith(("http://", "https://"))

    @property
    def base_url(self) -> str:
        """The effective base URL (`/api` appended), for display."""
        return self.client.base_url

    @property
    def list_supported(self) -> bool | None:
        """None until tried; False for backends without `GET /eval/jobs` (0.4.4)."""
        return self._list_supported

    def add_job_ids(self, ids: list[str]) -> None:
        """Jobs named by the user (sidebar, secrets), shown even when the backend cannot list."""
        for job_id in ids:
            job_id = job_id.strip()
            if job_id and job_id not in self.job_ids:
                self.job_ids.append(job_id)

    def close(self) -> None:
        self.client.close()

    def version(self) -> str:
        """Cheap, no request: the known jobs' ids, statuses and progress, plus a 5 s time bucket while any job
        is not terminal (so a running job is re-read at most every 5 s) and a 60 s bucket for listing backends
        (so new jobs appear). Once every job is terminal and the list is fresh, the token is stable."""
        with self._lock:
            states = sorted((jid, j.run.status, j.run.progress_completed) for jid, j in self._jobs.items() if j.run)
        now = time.time()
        parts = [self.base_url, ",".join(self.job_ids), repr(states)]
        if any(status not in TERMINAL for _jid, status, _p in states):
            parts.append(f"live:{int(now // self.poll_seconds)}")
        if self._list_supported is not False:
            parts.append(f"list:{int(now // self.list_seconds)}")
        return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]

    # -- runs ----------------------------------------------------------------------------------

    def _job(self, job_id: str) -> _Job:
        with self._lock:
            return self._jobs.setdefault(job_id, _Job())

    def _decorate(self, job_id: str) -> Run | None:
        """The stored run with the loader's notes (partial, not ready, mismatch, stale) and the results summary."""
        job = self._job(job_id)
        if job.run is None:
            return None
        update: dict[str, Any] = {"warnings": job.run.warnings + tuple(job.row_notes) + tuple(job.notes.values())}
        if job.summary is not None:
            update["reported_metrics"] = redact(job.summary)
            terminal = job.rows_final or job.run.status in TERMINAL
            update["report_label"] = REPORT_LABEL if terminal else f"partial {REPORT_LABEL}"
        return job.run.model_copy(update=update)

    def _store(self, body: dict[str, Any]) -> Run:
        job_id = str(body["job_id"])
        run = job_to_run(body, source=self.source, location=self.client.job_url(job_id))
        job = self._job(job_id)
        with self._lock:
            job.run = run
            job.loaded_at = _now()
            job.notes.pop("stale", None)
        return run

    def _mark_stale(self, job_id: str, exc: BackendError) -> None:
        job = self._job(job_id)
        last = job.loaded_at or self._last_ok
        since = last.strftime("%Y-%m-%d %H:%M:%S UTC") if last else "the last load"
        job.notes["stale"] = LoadWarning(code="stale", message=f"stale since {since}: {exc.detail}")

    def _ok(self) -> None:
        self._last_ok = _now()

    def list_runs(self) -> SourceListing:
        warnings: list[LoadWarning] = []
        bodies: list[dict[str, Any]] | None = None
        if self._list_supported is not False:
            try:
                bodies = self._list_all(warnings)
                self._list_supported = True
            except BackendHTTPError as exc:
                if exc.status not in (404, 405):
                    return self._stale_listing(exc)
                self._list_supported = False
            except BackendError as exc:
                return self._stale_listing(exc)
        listed = [str(b["job_id"]) for b in bodies or []]
        explicit = [j for j in self.job_ids if j not in listed]
        if bodies is None and not explicit:
            warnings.append(LoadWarning(
                code="no_job_ids", file=self.base_url,
                message=f"this backend has no job list (GET {self.base_url}/eval/jobs is not supported); "
                        f"name job ids as {self.source.split('#')[0]}#job_id,... or in the sidebar"))
        for body in bodies or []:
            self._store(body)
        failures: list[BackendError] = []
        for job_id in explicit:
            try:
                self._store(self._fetch_job(job_id))
            except BackendNotFound as exc:
                warnings.append(LoadWarning(code="no_such_job", message=exc.detail, file=self.base_url))
            except BackendError as exc:
                if self._job(job_id).run is not None:
                    self._mark_stale(job_id, exc)
                else:
                    failures.append(exc)
                    warnings.append(LoadWarning(code="job_unreadable", message=exc.detail, file=self.base_url))
        if failures and bodies is None and len(failures) == len(explicit) and not any(self._job(j).run for j in explicit):
            raise failures[0]
        if not failures:
            self._ok()
        order = [str(b["job_id"]) for b in bodies or []] + explicit
        with self._lock:
            self._order = order
        runs = [r for r in (self._decorate(j) for j in order) if r is not None]
        runs = _newest_first(runs)
        return SourceListing(source=self.source, kind=self.kind, runs=tuple(runs), warnings=tuple(warnings))

    def _stale_listing(self, exc: BackendError) -> SourceListing:
        """The list call failed: keep what was loaded before (each run marked stale), else fail the source."""
        with self._lock:
            order = list(self._order)
        if not order:
            raise exc
        for job_id in order:
            self._mark_stale(job_id, exc)
        runs = [r for r in (self._decorate(j) for j in order) if r is not None]
        warning = LoadWarning(code="stale", message=f"showing jobs loaded before: {exc.detail}", file=self.base_url)
        return SourceListing(source=self.source, kind=self.kind, runs=tuple(runs), warnings=(warning,))

    def _list_all(self, warnings: list[LoadWarning]) -> list[dict[str, Any]]:
        """Every page of `GET /eval/jobs`, newest first; partial items (no status) are completed with a status call."""
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        offset = 0
        while len(out) < self.max_jobs:
            data = self.client.list_jobs(limit=self.page_size, offset=offset, status=self.status_filter)
            parsed = list_items(data)
            if parsed is None:
                raise BackendBadResponse(self.base_url, f"unexpected response from {self.client.name} for the job list: "
                                         f"{str(data)[:200]!r}", url=f"{self.base_url}/eval/jobs", status=200)
            items, total = parsed
            fresh = 0
            for item in items:
                if not isinstance(item, dict) or not item.get("job_id"):
                    warnings.append(LoadWarning(code="skipped_job", message="a job list item has no job_id; skipped"))
                    continue
                job_id = str(item["job_id"])
                if job_id in seen:
                    continue
                seen.add(job_id)
                fresh += 1
                if item.get("status") is None and item.get("state") is None:
                    with contextlib.suppress(BackendNotFound):
                        item = {**item, **self._fetch_job(job_id)}
                out.append(item)
            offset += len(items)
            if not items or not fresh or (total is not None and offset >= total) or (total is None and len(items) < self.page_size):
                break
        return out

    def _fetch_job(self, job_id: str) -> dict[str, Any]:
        body = self.client.get_job(job_id)
        if not isinstance(body, dict):
            raise BackendBadResponse(self.base_url, f"unexpected response from {self.client.name} for job {job_id}: "
                                     f"{str(body)[:200]!r}", url=self.client.job_url(job_id), status=200)
        return {**body, "job_id": body.get("job_id") or job_id}

    def job_status(self, job_id: str) -> Run:
        """One fresh status call (the dashboard's refresh of a running job); stale data if it fails."""
        try:
            body = self._fetch_job(job_id)
        except BackendNotFound:
            raise
        except BackendError as exc:
            if self._job(job_id).run is None:
                raise
            self._mark_stale(job_id, exc)
        else:
            self._store(body)
            self._ok()
        run = self._decorate(job_id)
        assert run is not None
        return run

    def is_terminal(self, job_id: str) -> bool:
        job = self._job(job_id)
        return job.rows_final or (job.run is not None and job.run.status in TERMINAL)

    # -- rows ----------------------------------------------------------------------------------

    def load_samples(self, run_id: str) -> list[SampleRow]:
        """`/results` for one job: cached for good once terminal; partial rows (flagged) while it runs."""
        job = self._job(run_id)
        if job.rows_final and job.rows is not None:
            return self._with_transcript_flags(job, job.rows)
        try:
            body = self.client.get_results(run_id)
        except BackendNotReady as exc:
            job.notes["results_not_ready"] = LoadWarning(code="results_not_ready", message=f"no rows yet: {exc.detail}")
            return []
        except BackendNotFound:
            raise
        except BackendError as exc:
            if job.rows is None:
                raise
            self._mark_stale(run_id, exc)
            return self._with_transcript_flags(job, job.rows)
        self._ok()
        job.notes.pop("results_not_ready", None)
        job.notes.pop("stale", None)
        status = None
        if isinstance(body, dict) and (body.get("status") or body.get("state")):
            status, _raw = normalise_status(body)
        if status is None:
            if job.run is None:
                with contextlib.suppress(BackendError):
                    self._store(self._fetch_job(run_id))
            status = job.run.status if job.run is not None else "pending"
        terminal = status in TERMINAL
        rows, summary, warnings = result_rows(run_id, body, partial=not terminal)
        if terminal:
            warnings += summary_mismatches(summary, rows) if summary else []
            job.notes.pop("partial_results", None)
        else:
            total = job.run.progress_total if job.run else None
            of = f" of {total}" if total is not None else ""
            job.notes["partial_results"] = LoadWarning(code="partial_results",
                                               message=f"job is {status}: {len(rows)}{of} rows so far (partial)")
        with self._lock:
            job.rows, job.summary, job.rows_final, job.row_notes = rows, summary, terminal, warnings
            if job.run is not None and terminal and job.run.status not in TERMINAL:
                job.run = job.run.model_copy(update={"status": status})
        return self._with_transcript_flags(job, rows)

    def _with_transcript_flags(self, job: _Job, rows: list[SampleRow]) -> list[SampleRow]:
        """Once the traces are known, `has_transcript` says exactly which seeds have one."""
        if job.no_traces:
            return [r.model_copy(update={"has_transcript": False}) for r in rows]
        if job.traces is not None and (job.traces_final or job.rows_final):
            return [r.model_copy(update={"has_transcript": r.sample_id.isdigit() and int(r.sample_id) in job.traces})
                    for r in rows]
        return list(rows)

    # -- transcripts ---------------------------------------------------------------------------

    def _traces(self, job_id: str) -> tuple[dict[int, dict[str, Any]], list[LoadWarning]]:
        """The job's traces ZIP, fetched on first use; terminal jobs never refetch, running ones when progress moved."""
        from loaders.formats.synth_zip import read_zip_traces  # the shared trace-directory reader

        job = self._job(job_id)
        progress = job.run.progress_completed if job.run else None
        if job.traces is not None and (job.traces_final or job.traces_progress == progress):
            return job.traces, job.traces_warnings
        terminal = self.is_terminal(job_id)
        try:
            data = self.client.get_traces_zip(job_id)
        except BackendNotFound:
            job.no_traces = True
            raise
        except BackendError as exc:
            if job.traces is None:
                raise
            self._mark_stale(job_id, exc)
            return job.traces, job.traces_warnings
        traces, warnings = read_zip_traces(data, f"{self.client.job_url(job_id)}/traces")
        with self._lock:
            job.traces, job.traces_warnings = traces, list(warnings)
            job.traces_progress, job.traces_final, job.no_traces = progress, terminal, False
        return traces, list(warnings)

    def load_transcript(self, run_id: str, sample_id: str, attempt: int = 0) -> Transcript:
        from loaders.formats.synth_trace import build_transcript

        if attempt != 0:
            raise UnknownSample(self.source, f"job {run_id} has one attempt per seed; no attempt {attempt}")
        if not sample_id.lstrip("-").isdigit():
            raise UnknownSample(self.source, f"sample {sample_id!r} of job {run_id} has no seed, so no trace can be matched")
        seed = int(sample_id)
        traces, warnings = self._traces(run_id)
        trace = traces.get(seed)
        if trace is None:
            raise UnknownSample(self.source, f"no trace for seed {seed} in the traces of job {run_id}")
        transcript = build_transcript(run_id, sample_id, attempt, trace)
        update: dict[str, Any] = {"warnings": transcript.warnings + tuple(warnings)}
        row = next((r for r in self._job(run_id).rows or [] if r.sample_id == sample_id), None)
        if row is not None:  # the outcome score is not in a trace (synth-eval.md §6.5): it comes from /results
            update["grade"] = transcript.grade.model_copy(update={"score": row.score, "error": row.error,
                                                                  "finish_reason": transcript.grade.finish_reason or row.finish_reason})
        return transcript.model_copy(update=update)


def _newest_first(runs: list[Run]) -> list[Run]:
    """Newest first by created_at (undated last); a stable sort keeps the backend's order among equals."""
    oldest = datetime.min.replace(tzinfo=UTC)
    return sorted(runs, key=lambda r: r.created_at or oldest, reverse=True)
