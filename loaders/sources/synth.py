"""synth-ai eval output: a run folder, a results JSON, a text report, one trace, or a ZIP of traces.

See ../shared/formats/synth-eval.md. `synth-ai eval` writes `--output-json` (rows, no run
id or time), `--output-txt` (config + table) and `--traces-dir/seed_<N>_trace.json`. One
folder holding these directly is one run; a folder of such folders is left to the folder
kind, which expands it. Nothing is written to disk: ZIPs are read in memory.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loaders.base import Loader
from loaders.errors import SourceError, UnknownRun, UnknownSample
from loaders.formats import synth_results, synth_trace
from loaders.formats.synth_results import ResultsFile, build_rows, format_avg_row, parse_report, parse_results_json
from loaders.formats.synth_zip import read_zip
from loaders.registry import register
from loaders.schema import Grade, LoadWarning, Run, SampleRow, SourceListing, Transcript

HEAD_BYTES = 64 * 1024
MAX_FILE_BYTES = 200 * 1024 * 1024
TRACE_DIR_NAMES = ("traces",)  # a `traces*` sub-folder next to the results file is the CLI's usual --traces-dir
_TRACE_HINTS = ('"session_time_steps"', '"session_trace"', '"lm_call"', '"markov_blanket_message_history"')


def _head(path: Path) -> str:
    with path.open("rb") as fh:
        return fh.read(HEAD_BYTES).decode("utf-8", errors="replace")


def looks_like_trace(head: str) -> bool:
    """Cheap: a synth trace names one of its characteristic keys in its first bytes."""
    text = head.lstrip()
    if not text.startswith("{"):
        return False
    return any(h in text for h in _TRACE_HINTS) or ('"event_history"' in text and '"schema_version": "3' in text)


@dataclass
class _Parts:
    """The synth files directly in a folder (and in its `traces*` sub-folders)."""

    results: list[Path] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)
    traces: list[Path] = field(default_factory=list)
    other_json: list[Path] = field(default_factory=list)

    def any(self) -> bool:
        return bool(self.results or self.reports or self.traces)


def folder_parts(folder: Path) -> _Parts:
    parts = _Parts()
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return parts
    subdirs = [e for e in entries if e.is_dir() and e.name.lower().startswith(TRACE_DIR_NAMES)]
    for entry in entries:
        if not entry.is_file() or entry.name.startswith("."):
            continue
        name = entry.name.lower()
        try:
            if synth_trace.SEED_FILE.search(entry.name):
                parts.traces.append(entry)
            elif name.endswith(".json"):
                head = _head(entry)
                if synth_results.looks_like_results(head):
                    parts.results.append(entry)
                elif looks_like_trace(head):
                    parts.traces.append(entry)
                else:
                    parts.other_json.append(entry)
            elif name.endswith(".txt") and synth_results.looks_like_report(_head(entry)):
                parts.reports.append(entry)
        except OSError:
            continue
    if parts.results or parts.reports or parts.traces:
        for sub in subdirs:
            try:
                parts.traces.extend(sorted(p for p in sub.iterdir() if p.is_file() and synth_trace.SEED_FILE.search(p.name)))
            except OSError:
                continue
    return parts


@dataclass
class _Inputs:
    """Everything one run is built from, whatever the source shape."""

    location: str
    name: str
    results: ResultsFile | None = None
    results_origin: str | None = None
    report: ResultsFile | None = None
    report_origin: str | None = None
    traces: dict[int, dict[str, Any]] = field(default_factory=dict)
    trace_names: dict[int, str] = field(default_factory=dict)  # seed -> file path or member name
    locators: dict[int, tuple[str, str]] = field(default_factory=dict)  # seed -> ("file", path) | ("zip", member)
    manifest: dict[str, Any] | None = None
    warnings: list[LoadWarning] = field(default_factory=list)
    digests: dict[str, Any] = field(default_factory=dict)  # "results" | "report" | "traces" | "zip" -> sha256

    def digest(self, role: str) -> Any:
        return self.digests.setdefault(role, hashlib.sha256())
    stamp_file: Path | None = None


@dataclass
class _Scan:
    run: Run
    rows: list[SampleRow]
    locators: dict[int, tuple[str, str]]


@register
class SynthLoader(Loader):
    kind = "synth"
    label = "synth-ai eval output"

    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.path = Path(source)
        self._lock = threading.Lock()
        self._cached: tuple[str, _Scan | None, list[LoadWarning]] | None = None

    @classmethod
    def handles(cls, source: str) -> bool:
        path = Path(source)
        if path.is_dir():
            return folder_parts(path).any()
        if not path.is_file():
            return False
        name = path.name.lower()
        if name.endswith(".zip"):
            try:
                with zipfile.ZipFile(path) as zf:
                    return any(n.lower().endswith(".json") and "__MACOSX" not in n for n in zf.namelist())
            except (zipfile.BadZipFile, OSError):
                return False
        if synth_trace.SEED_FILE.search(path.name):
            return True
        if name.endswith(".json"):
            head = _head(path)
            return synth_results.looks_like_results(head) or looks_like_trace(head)
        if name.endswith(".txt"):
            return synth_results.looks_like_report(_head(path))
        return False

    # ---- scanning ------------------------------------------------------------------

    def _scan(self) -> tuple[_Scan | None, list[LoadWarning]]:
        version = self.version()
        with self._lock:
            if self._cached and self._cached[0] == version:
                return self._cached[1], self._cached[2]
            if not self.path.exists():
                raise SourceError(self.source, "no such file or folder")
            try:
                inputs = self._gather()
            except OSError as exc:
                raise SourceError(self.source, f"cannot read: {exc.strerror or exc}") from exc
            scan = None
            if inputs.results is not None or inputs.report is not None or inputs.traces:
                scan = _build(self.source, inputs)
            else:
                inputs.warnings.append(LoadWarning(code="no_synth_data", file=inputs.location,
                                                   message="no readable trace, results file or text report"))
            self._cached = (version, scan, list(inputs.warnings))
            return scan, list(inputs.warnings)

    def _gather(self) -> _Inputs:
        path = self.path
        inputs = _Inputs(location=str(path), name=path.name)
        if path.is_dir():
            parts = folder_parts(path)
            for extra in parts.results[1:]:
                inputs.warnings.append(LoadWarning(code="several_results", file=str(extra), message=(
                    f"a second results file in this folder; only {parts.results[0].name} is read")))
            for other in parts.other_json:
                inputs.warnings.append(LoadWarning(code="unrecognised", file=str(other),
                                                   message="skipped: neither a synth trace nor a results file"))
            if parts.results:
                _add_results(inputs, parts.results[0])
            if parts.reports:
                _add_report(inputs, parts.reports[0])
            for trace in parts.traces:
                _add_trace_file(inputs, trace)
            inputs.stamp_file = (parts.results or parts.reports or sorted(parts.traces, key=_mtime)[-1:] or [None])[0]
        elif path.name.lower().endswith(".zip"):
            data = path.read_bytes()
            inputs.digest("zip").update(data)
            contents = read_zip(data, str(path))
            inputs.warnings.extend(contents.warnings)
            inputs.traces = contents.traces
            inputs.trace_names = {s: f"{path.name}!{m}" for s, m in contents.members.items()}
            inputs.locators = {s: ("zip", m) for s, m in contents.members.items()}
            inputs.manifest = contents.manifest
            if contents.results:
                inputs.results = parse_results_json(contents.results[1], f"{path}!{contents.results[0]}")
                inputs.results_origin = f"{path}!{contents.results[0]}"
            if contents.report:
                inputs.report = parse_report(contents.report[1], f"{path}!{contents.report[0]}")
                inputs.report_origin = f"{path}!{contents.report[0]}"
            inputs.name = path.stem
            inputs.stamp_file = path
        else:
            head = _head(path)
            inputs.name = path.stem
            inputs.stamp_file = path
            if path.name.lower().endswith(".txt"):
                _add_report(inputs, path)
            elif synth_results.looks_like_results(head) and not synth_trace.SEED_FILE.search(path.name):
                _add_results(inputs, path)
            else:
                _add_trace_file(inputs, path)
        return inputs

    # ---- the Loader contract -------------------------------------------------------

    def list_runs(self) -> SourceListing:
        scan, warnings = self._scan()
        if scan is None:
            return SourceListing(source=self.source, kind=self.kind, warnings=tuple(warnings))
        return SourceListing(source=self.source, kind=self.kind, runs=(scan.run,))

    def _run(self, run_id: str) -> _Scan:
        scan, _warnings = self._scan()
        if scan is None or scan.run.run_id != run_id:
            raise UnknownRun(self.source, f"no run {run_id!r} here")
        return scan

    def load_samples(self, run_id: str) -> list[SampleRow]:
        return list(self._run(run_id).rows)

    def load_transcript(self, run_id: str, sample_id: str, attempt: int = 0) -> Transcript:
        scan = self._run(run_id)
        row = next((r for r in scan.rows if r.sample_id == sample_id and r.attempt == attempt), None)
        if row is None:
            raise UnknownSample(self.source, f"no sample {sample_id!r} attempt {attempt} in run {run_id}")
        grade = Grade(score=row.score, correct=row.correct, error=row.error, finish_reason=row.finish_reason)
        seed = int(sample_id) if re.fullmatch(r"-?\d+", sample_id) else None
        locator = scan.locators.get(seed) if seed is not None and attempt == 0 else None
        if locator is None:
            return Transcript(run_id=run_id, sample_id=sample_id, attempt=attempt, grade=grade, warnings=(LoadWarning(
                code="no_trace", message=f"no trace for seed {sample_id}: only the result row is known"),))
        trace, warnings = self._read_trace(locator)
        if trace is None:
            return Transcript(run_id=run_id, sample_id=sample_id, attempt=attempt, grade=grade, warnings=tuple(warnings))
        transcript = synth_trace.build_transcript(run_id, sample_id, attempt, trace)
        merged = transcript.grade.model_copy(update={k: v for k, v in grade.model_dump().items() if v is not None})
        return transcript.model_copy(update={"grade": merged, "warnings": transcript.warnings + tuple(warnings)})

    def _read_trace(self, locator: tuple[str, str]) -> tuple[Any, list[LoadWarning]]:
        where, name = locator
        if where == "zip":
            contents = read_zip(self.path.read_bytes(), str(self.path), only=name)
            trace = next(iter(contents.traces.values()), None)
            return trace, contents.warnings
        try:
            return json.loads(Path(name).read_bytes()), []
        except (OSError, ValueError) as exc:
            return None, [LoadWarning(code="bad_trace", file=name, message=f"cannot read the trace now ({exc})")]


# ---- gathering helpers -----------------------------------------------------------------


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _read_capped(inputs: _Inputs, path: Path, role: str) -> bytes | None:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            inputs.warnings.append(LoadWarning(code="too_large", file=str(path),
                                               message=f"skipped: {size} bytes is over the {MAX_FILE_BYTES // 2**20} MB limit"))
            return None
        data = path.read_bytes()
    except OSError as exc:
        inputs.warnings.append(LoadWarning(code="unreadable", file=str(path), message=f"cannot read: {exc.strerror or exc}"))
        return None
    inputs.digest(role).update(path.name.encode() + b"\0" + data)
    return data


def _add_results(inputs: _Inputs, path: Path) -> None:
    data = _read_capped(inputs, path, "results")
    if data is not None:
        inputs.results = parse_results_json(data, str(path))
        inputs.results_origin = str(path)


def _add_report(inputs: _Inputs, path: Path) -> None:
    data = _read_capped(inputs, path, "report")
    if data is not None:
        inputs.report = parse_report(data.decode("utf-8", errors="replace"), str(path))
        inputs.report_origin = str(path)


def _add_trace_file(inputs: _Inputs, path: Path) -> None:
    data = _read_capped(inputs, path, "traces")
    if data is None:
        return
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        detail = f"{exc.msg} at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        inputs.warnings.append(LoadWarning(code="bad_trace", file=str(path), message=f"trace skipped: not JSON ({detail})"))
        return
    if not synth_trace.is_trace(obj):
        inputs.warnings.append(LoadWarning(code="not_a_trace", file=str(path), message=(
            "trace skipped: not a synth trace (neither compact v3 nor a full SessionTrace)")))
        return
    seed = synth_trace.seed_of(obj, path.name)
    if seed is None:
        inputs.warnings.append(LoadWarning(code="no_seed", file=str(path), message=(
            "trace skipped: no seed in the file name, metadata.seed or metadata.run_id")))
        return
    if seed in inputs.traces:
        inputs.warnings.append(LoadWarning(code="duplicate_seed", file=str(path), message=(
            f"a second trace for seed {seed} (first: {inputs.trace_names[seed]}); skipped")))
        return
    inputs.traces[seed] = obj
    inputs.trace_names[seed] = str(path)
    inputs.locators[seed] = ("file", str(path))


# ---- building the run -----------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "synth"


def _build(source: str, inputs: _Inputs) -> _Scan:
    location = inputs.location
    # §3 suggests path + content hash. The folder's own name stands in for the path: an absolute path would give
    # the same run another id on a teammate's machine and break pasted links (two identical copies in one
    # catalog are told apart there, as `id~2`). The content is the results file when there is one, so
    # attaching traces later keeps the id.
    role = next(r for r in ("results", "report", "zip", "traces", "") if r in inputs.digests or not r)
    content = inputs.digests[role].digest() if role else b""
    key = hashlib.sha256(Path(location).name.encode() + b"\0" + content).hexdigest()
    run_id = f"synth-{_slug(inputs.name)}-{key[:12]}"
    primary = inputs.results if inputs.results is not None else inputs.report
    warnings: list[LoadWarning] = list(inputs.warnings)
    result_rows: list[dict[str, Any]] | None = None
    if inputs.results is not None:
        warnings.extend(inputs.results.warnings)
        result_rows = inputs.results.rows
        if inputs.report is not None:
            warnings.extend(w for w in inputs.report.warnings if w.code != "rounded_values")
    elif inputs.report is not None:
        warnings.extend(inputs.report.warnings)
        result_rows = inputs.report.rows
    built = build_rows(run_id, result_rows, inputs.traces, origin=location, trace_files=inputs.trace_names)
    warnings.extend(built.warnings)
    config: dict[str, Any] = dict(primary.config) if primary is not None else {}
    if inputs.report is not None and inputs.results is not None and not config:
        config = dict(inputs.report.config)
    policy = config.get("policy_config") if isinstance(config.get("policy_config"), dict) else {}
    trace_models = Counter(f.model for f in built.facts.values() if f.model)
    model = policy.get("model") or (trace_models.most_common(1)[0][0] if trace_models else None)
    eval_name = config.get("app_id") or config.get("env_name") or _trace_env(inputs.traces)
    seen = {r.sample_id for r in built.rows}
    for label, seeds in (("config.seeds", config.get("seeds")), ("manifest seeds", (inputs.manifest or {}).get("seeds"))):
        if isinstance(seeds, list):
            missing = [str(s) for s in seeds if str(s) not in seen]
            if missing:
                warnings.append(LoadWarning(code="missing_seeds", file=location, message=(
                    f"{label} lists seed(s) {', '.join(missing)} but there is no result row or trace for them")))
    reported: dict[str, Any] = {}
    label = None
    if inputs.report is not None and inputs.report.reported:
        reported, label = dict(inputs.report.reported), synth_results.REPORT_TEXT_LABEL
        if inputs.results is not None:
            printed = {k: synth_results.fmt_cell(v) for k, v in inputs.report.reported.items()}
            if printed != format_avg_row(inputs.results.rows):
                warnings.append(LoadWarning(code="report_mismatch", file=inputs.report_origin, message=(
                    "the text report's avg row differs from the one the results file gives: are they from the same run?")))
    elif inputs.results is not None:
        reported, label = dict(inputs.results.reported), synth_results.REPORT_LABEL
    created_at = None
    if inputs.stamp_file is not None:
        created_at = datetime.fromtimestamp(_mtime(inputs.stamp_file), tz=UTC)
        config["created_at_source"] = f"modification time of {inputs.stamp_file.name} (synth output carries no run timestamp)"
    if policy.get("provider"):
        config.setdefault("provider", policy["provider"])
    files = {"results": inputs.results_origin, "report": inputs.report_origin,
             "traces": [inputs.trace_names[s] for s in sorted(inputs.trace_names)] or None}
    config["files"] = {k: v for k, v in files.items() if v}
    if inputs.manifest is not None:
        config["manifest"] = inputs.manifest
    dialect = _dialect(built.facts)
    shown_name = inputs.name if inputs.name not in (eval_name, "") else None
    display = " · ".join(x for x in (eval_name or inputs.name, model or "unknown model", shown_name) if x)
    run = Run(
        run_id=run_id, source=source, source_kind="synth", location=location, display_name=display, eval_name=eval_name,
        model=model, created_at=created_at, status="completed" if primary is not None else "unknown", dialect=dialect,
        config=config, reported_metrics=reported, report_label=label, attribution="seed", has_sample_ids=True,
        aggregates={"n_traces": len(inputs.traces), "n_result_rows": len(result_rows or [])},
        warnings=tuple(warnings),
    )
    return _Scan(run=run, rows=built.rows, locators=dict(inputs.locators))


def _trace_env(traces: dict[int, dict[str, Any]]) -> str | None:
    for trace in traces.values():
        inner = synth_trace.unwrap(trace) or {}
        meta = inner.get("metadata") if isinstance(inner.get("metadata"), dict) else {}
        if isinstance(meta.get("env_name"), str):
            return meta["env_name"]
        run_id = meta.get("run_id")
        if isinstance(run_id, str) and synth_trace.RUN_ID_SEED.match(run_id):
            return run_id.rsplit("-seed-", 1)[0]
    return None


def _dialect(facts: dict[int, Any]) -> str:
    shapes = sorted({f.shape for f in facts.values() if f.shape})
    if not shapes:
        return "synth-results"
    return shapes[0] if len(shapes) == 1 else "synth-mixed"
