"""A local stand-in for the synth eval-jobs API (`shared/formats/synth-backend-api.md`).

Serves the fixture jobs in `fixtures/jobs/*.json` over the real endpoints, with bearer
auth, one job that runs and finishes while you watch, and switchable faults, so the
backend loader is tested over real HTTP and the demo has a backend source to show.

A job fixture is `{"job": ..., "results": ..., "traces": ..., "results_status": 409, "live": true}`;
`job` and `results` are inline bodies or paths of bodies under `fixtures/` (the API examples
live in `fixtures/api/`). `traces` names a template (`compact` or `full`) and the seeds to build.
"""

from __future__ import annotations

import asyncio
import copy
import io
import json
import os
import time
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

FIXTURES = Path(__file__).parent / "fixtures"
FAULTS = ("none", "slow", "500", "401", "403", "malformed", "no_list", "list_405")
TERMINAL = {"completed", "failed", "cancelled"}
_STATUS = {"pending": "pending", "queued": "pending", "running": "running", "in_progress": "running",
           "completed": "completed", "succeeded": "completed", "success": "completed", "failed": "failed",
           "error": "failed", "cancelled": "cancelled", "canceled": "cancelled"}
# (query, expected, predicted) per seed, for the generated traces and rows of the live job.
QUERIES = [
    ("I still have not received my new card, it has been a week.", "card_arrival", "card_arrival"),
    ("How do I top up my account with a cheque?", "top_up_by_cash_or_cheque", "top_up_by_cash_or_cheque"),
    ("My card payment was declined at the shop.", "declined_card_payment", "card_payment_not_recognised"),
    ("Can I change my PIN at an ATM?", "change_pin", "change_pin"),
    ("Why was I charged a fee for a transfer?", "transfer_fee_charged", "transfer_fee_charged"),
    ("The exchange rate on my statement looks wrong.", "wrong_exchange_rate_for_cash_withdrawal", "exchange_rate"),
]


def normalise_status(raw: Any) -> str:
    """§4 of the spec; unknown values count as pending."""
    return _STATUS.get(str(raw or "").strip().lower(), "pending")


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat().replace("+00:00", "Z")


def _load(ref: Any) -> Any:
    if isinstance(ref, str):
        return json.loads((FIXTURES / ref).read_text(encoding="utf-8"))
    return copy.deepcopy(ref)


@dataclass
class Fault:
    mode: str = "none"
    delay: float = 2.0  # seconds, for "slow"
    times: int | None = None  # apply to the next N API requests only; None = until cleared
    path: str | None = None  # only requests whose path contains this


@dataclass
class State:
    key: str
    admin: bool
    seconds_per_seed: float
    started: float = field(default_factory=time.time)
    advanced: int = 0
    fault: Fault = field(default_factory=Fault)
    requests: dict[str, int] = field(default_factory=dict)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)


def _load_jobs() -> dict[str, dict[str, Any]]:
    jobs = {}
    for path in sorted((FIXTURES / "jobs").glob("*.json")):
        spec = json.loads(path.read_text(encoding="utf-8"))
        spec["job"] = _load(spec["job"])
        spec["results"] = _load(spec.get("results"))
        jobs[spec["job"]["job_id"]] = spec
    return jobs


def _live_completed(state: State, total: int) -> int:
    return min(total, int((time.time() - state.started) / state.seconds_per_seed) + state.advanced)


def _row(seed: int) -> dict[str, Any]:
    _query, expected, predicted = QUERIES[seed % len(QUERIES)]
    score = 1.0 if expected == predicted else 0.0
    return {"seed": seed, "score": score, "reward_mean": score, "outcome_score": score, "events_score": None,
            "latency_ms": 1500.0 + 37.5 * seed, "verifier_score": None, "tokens": 330 + seed, "cost_usd": 5.76e-05, "error": None}


def job_body(state: State, spec: dict[str, Any]) -> dict[str, Any]:
    """The status body; the live job's progress, status and times follow the clock."""
    body = copy.deepcopy(spec["job"])
    if not spec.get("live"):
        return body
    seeds = body.get("config", {}).get("seeds", [])
    done = _live_completed(state, len(seeds))
    body.update(created_at=_iso(state.started), started_at=_iso(state.started + 0.5), completed_at=None)
    results: dict[str, Any] = {"completed": done, "total": len(seeds)}
    if done >= len(seeds):
        body["status"] = "completed"
        body["completed_at"] = _iso(state.started + 0.5 + state.seconds_per_seed * len(seeds))
        rows = [_row(s) for s in seeds]
        results["mean_score"] = sum(r["score"] for r in rows) / len(rows) if rows else None
    body["results"] = results
    return body


def results_body(state: State, spec: dict[str, Any]) -> dict[str, Any]:
    if not spec.get("live"):
        body = copy.deepcopy(spec["results"]) if spec.get("results") is not None else {"results": []}
        body["job_id"] = spec["job"]["job_id"]
        return body
    job = job_body(state, spec)
    seeds = job["config"]["seeds"][: job["results"]["completed"]]
    rows = [_row(s) for s in seeds]
    scores = [r["score"] for r in rows]
    summary = {"mean_score": sum(scores) / len(scores) if scores else None, "num_seeds": len(job["config"]["seeds"]),
               "num_successful": len(rows), "num_failed": 0, "total_tokens": sum(r["tokens"] for r in rows),
               "total_cost_usd": round(sum(r["cost_usd"] for r in rows), 9)}
    return {"job_id": job["job_id"], "status": job["status"], "summary": summary, "results": list(reversed(rows))}


def make_trace(template: str, job_id: str, seed: int) -> str:
    """A per-seed trace built from a template trace file by swapping the seed's query and answer."""
    text = (FIXTURES / "traces" / f"{template}_template.json").read_text(encoding="utf-8")
    query, expected, predicted = QUERIES[seed % len(QUERIES)]
    text = text.replace("I still have not received my new card, it has been a week.", query)
    text = text.replace("I still have not received my new card.", query)
    text = text.replace('"expected": "card_arrival"', json.dumps("expected") + ": " + json.dumps(expected))
    text = text.replace("card_arrival", predicted)
    text = text.replace("banking77-seed-0-", f"banking77-seed-{seed}-").replace("trace_abc123", f"trace_{job_id[5:]}_{seed}")
    if expected != predicted:
        text = text.replace('"correct": true', '"correct": false').replace('"reward": 1.0', '"reward": 0.0')
    trace = json.loads(text)
    if isinstance(trace.get("metadata"), dict):
        trace["metadata"]["seed"] = seed
    return json.dumps(trace, indent=2)


def traces_zip(state: State, spec: dict[str, Any]) -> bytes | None:
    traces = spec.get("traces")
    if not traces:
        return None
    job = job_body(state, spec)
    if spec.get("live"):
        seeds = job["config"]["seeds"][: job["results"]["completed"]]
    else:
        seeds = traces.get("seeds", [])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for seed in seeds:
            zf.writestr(f"seed_{seed}_trace.json", make_trace(traces["template"], job["job_id"], seed))
        zf.writestr("manifest.json", json.dumps({"job_id": job["job_id"], "seeds": seeds, "format": "v3"}))
    return buf.getvalue()


def _detail(status: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def create_app(key: str, *, faults: bool = True, seconds_per_seed: float = 4.0, fault: str | None = None) -> Starlette:
    """The ASGI app. `faults` enables the `/_admin/*` endpoints (tests, demos of error states)."""
    state = State(key=key, admin=faults, seconds_per_seed=seconds_per_seed, jobs=_load_jobs())
    if fault:
        state.fault = Fault(mode=fault, delay=float(os.environ.get("FAKE_BACKEND_SLOW_SECONDS", "2")))

    async def guard(request: Request) -> Response | None:
        """Counts the request, applies the active fault, checks the bearer key."""
        path = request.url.path
        state.requests[path] = state.requests.get(path, 0) + 1
        fault = state.fault
        if fault.mode != "none" and (fault.path is None or fault.path in path):
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    state.fault = Fault()
            if fault.mode == "slow":
                await asyncio.sleep(fault.delay)
            elif fault.mode == "500":
                return _detail(500, "internal error (injected fault)")
            elif fault.mode == "401":
                return _detail(401, "Invalid API key")
            elif fault.mode == "403":
                return _detail(403, "This key may not read jobs of this organisation")
            elif fault.mode == "malformed":
                return Response("<html><body>502 Bad Gateway: upstream sent garbage</body></html>", media_type="application/json")
            elif fault.mode in ("no_list", "list_405") and path.rstrip("/").endswith("/eval/jobs"):
                return _detail(404, "Not Found") if fault.mode == "no_list" else _detail(405, "Method Not Allowed")
        auth = request.headers.get("authorization", "")
        if auth != f"Bearer {state.key}":
            return _detail(401, "Invalid API key" if auth else "Missing API key")
        return None

    def find(request: Request) -> dict[str, Any] | None:
        return state.jobs.get(request.path_params["job_id"])

    async def list_jobs(request: Request) -> Response:
        if (denied := await guard(request)) is not None:
            return denied
        try:
            limit = max(1, min(200, int(request.query_params.get("limit", 50))))
            offset = max(0, int(request.query_params.get("offset", 0)))
        except ValueError:
            return _detail(422, "limit and offset must be integers")
        wanted = request.query_params.get("status")
        bodies = [job_body(state, spec) for spec in state.jobs.values()]
        if wanted:
            bodies = [b for b in bodies if normalise_status(b.get("status") or b.get("state")) == normalise_status(wanted)]
        bodies.sort(key=lambda b: b.get("created_at") or "", reverse=True)
        return JSONResponse({"jobs": bodies[offset: offset + limit], "limit": limit, "offset": offset, "total": len(bodies)})

    async def get_job(request: Request) -> Response:
        if (denied := await guard(request)) is not None:
            return denied
        spec = find(request)
        return JSONResponse(job_body(state, spec)) if spec else _detail(404, "Eval job not found")

    async def get_results(request: Request) -> Response:
        if (denied := await guard(request)) is not None:
            return denied
        spec = find(request)
        if spec is None:
            return _detail(404, "Eval job not found")
        if spec.get("results_status"):
            return _detail(int(spec["results_status"]), "Job has not finished yet")
        return JSONResponse(results_body(state, spec))

    async def get_traces(request: Request) -> Response:
        if (denied := await guard(request)) is not None:
            return denied
        spec = find(request)
        if spec is None:
            return _detail(404, "Eval job not found")
        data = traces_zip(state, spec)
        if data is None:
            return _detail(404, "No traces stored for this job")
        name = f"{spec['job']['job_id']}_traces.zip"
        return Response(data, media_type="application/zip", headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def admin(request: Request) -> Response:
        if not state.admin:
            return _detail(404, "Not Found")
        action = request.path_params["action"]
        body: dict[str, Any] = {}
        if request.method == "POST" and (raw := await request.body()):
            body = json.loads(raw)
        if action == "fault":
            mode = str(body.get("mode", "none"))
            if mode not in FAULTS:
                return _detail(422, f"mode must be one of {', '.join(FAULTS)}")
            state.fault = Fault(mode=mode, delay=float(body.get("delay", 2.0)), times=body.get("times"), path=body.get("path"))
        elif action == "reset":
            state.fault = Fault()
            state.requests.clear()
            state.started = time.time()
            state.advanced = 0
            state.seconds_per_seed = float(body.get("seconds_per_seed", state.seconds_per_seed))
        elif action == "advance":
            state.advanced += int(body.get("seeds", 1))
        elif action != "stats":
            return _detail(404, "Not Found")
        return JSONResponse({"fault": state.fault.mode, "requests": state.requests, "seconds_per_seed": state.seconds_per_seed})

    async def health(_request: Request) -> Response:
        return PlainTextResponse("ok")

    routes = [
        Route("/health", health),
        Route("/api/eval/jobs", list_jobs),
        Route("/api/eval/jobs/{job_id}", get_job),
        Route("/api/eval/jobs/{job_id}/results", get_results),
        Route("/api/eval/jobs/{job_id}/traces", get_traces),
        Route("/_admin/{action}", admin, methods=["GET", "POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.fake = state
    return app
