"""synth-ai eval results: the `--output-json` file, the text report, and rows joined with traces.

See ../shared/formats/synth-eval.md §2-§4 and synth-backend-api.md §5. The results
file has no run id or timestamp; the text report is a fallback only (4-decimal values).
`format_eval_table`'s float printing is reproduced exactly so the `avg` row we show and
the one the CLI printed agree character for character.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loaders.formats.index import numeric_sort_key
from loaders.formats.synth_trace import STEP_REWARD_LABEL, TraceFacts, trace_facts
from loaders.schema import LoadWarning, SampleRow

# table column -> EvalResult field, in format_eval_table's order
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("seed", "seed"), ("score", "score"), ("reward_mean", "reward_mean"), ("outcome", "outcome_score"),
    ("events", "events_score"), ("latency_ms", "latency_ms"), ("verifier", "verifier_score"), ("tokens", "tokens"),
    ("cost_usd", "cost_usd"), ("error", "error"),
)
_HEADER_ALIASES = {"mean_return": "reward_mean"}  # older CLIs named the column mean_return
SCORE_KEYS = ("score", "outcome_reward", "outcome_score", "reward_mean")  # backend §5 order
NUMERIC_FIELDS = ("score", "reward_mean", "outcome_score", "outcome_reward", "events_score", "latency_ms", "verifier_score",
                  "cost_usd")
REPORT_LABEL = "synth CLI avg row"
REPORT_TEXT_LABEL = "synth text report avg row"
ROUNDING_NOTE = "values parsed from the text report are rounded to 4 decimals (no results JSON was found)"


# ---- format_eval_table, reproduced --------------------------------------------------


def fmt_cell(value: Any) -> str:
    """A cell as format_eval_table prints it: `-` for null, floats `f"{v:.4f}"` then strip `0`s and `.`."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)


def _avg(values: list[Any]) -> float | None:
    return sum(values) / len(values) if values else None


def avg_row(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The CLI's `avg` row, keyed by table column: mean of numeric values (NaN included, as upstream).

    `tokens` is the integer part of the mean of integer values; `error` is always absent.
    """
    out: dict[str, Any] = {}
    for column, name in TABLE_COLUMNS[1:-1]:
        values = [r.get(name) for r in results]
        if name == "tokens":
            ints = [v for v in values if isinstance(v, int)]
            out[column] = int(sum(ints) / len(ints)) if ints else None
        else:
            out[column] = _avg([v for v in values if isinstance(v, int | float)])
    return out


def format_eval_table(results: Sequence[Mapping[str, Any]]) -> str:
    """The stdout table of `synth-ai eval`, byte for byte (cells padded, so lines end in spaces)."""
    headers = [c for c, _ in TABLE_COLUMNS]
    rows: list[list[str]] = []
    for r in results:
        rows.append([str(r.get("seed")), *(fmt_cell(r.get(name)) for _c, name in TABLE_COLUMNS[1:-1]), r.get("error") or "-"])
    avg = avg_row(results)
    rows.append(["avg", *(fmt_cell(avg[c]) for c, _n in TABLE_COLUMNS[1:-1]), "-"])
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]

    def render(cells: list[str]) -> str:
        return " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells))

    return "\n".join([render(headers), "-+-".join("-" * w for w in widths), *(render(row) for row in rows)])


def format_avg_row(results: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The `avg` row as printed text, per column (what the CLI of evaldash shows next to its own mean)."""
    return {column: fmt_cell(value) for column, value in avg_row(results).items()}


# ---- the --output-json file ---------------------------------------------------------


@dataclass
class ResultsFile:
    config: dict[str, Any]
    rows: list[dict[str, Any]]
    warnings: list[LoadWarning] = field(default_factory=list)
    reported: dict[str, Any] = field(default_factory=dict)  # the avg row (parsed from text, or computed)
    report_label: str | None = None
    from_text: bool = False


def looks_like_results(head: str) -> bool:
    """Cheap test on the first bytes of a JSON file: `{"config": ..., "results": ...}` as the CLI writes it."""
    text = head.lstrip()
    return text.startswith("{") and '"config"' in text[:4000] and ('"results"' in text or len(text) >= 60000)


def parse_results_json(data: bytes | str, origin: str) -> ResultsFile:
    """The `--output-json` payload; NaN parses (json.loads), rows are kept as dicts, damage is a warning."""
    warnings: list[LoadWarning] = []
    try:
        payload = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        msg = f"not JSON ({exc.msg} at line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else f"not JSON ({exc})"
        return ResultsFile({}, [], [LoadWarning(code="bad_results", message=msg, file=origin)])
    if not isinstance(payload, dict):
        return ResultsFile({}, [], [LoadWarning(code="bad_results", message="not a results object", file=origin)])
    config = payload.get("config") if isinstance(payload.get("config"), dict) else {}
    raw_rows = payload.get("results")
    if isinstance(raw_rows, dict) and isinstance(raw_rows.get("items"), list):
        raw_rows = raw_rows["items"]
    if not isinstance(raw_rows, list):
        warnings.append(LoadWarning(code="bad_results", message="`results` is not a list: no rows", file=origin))
        raw_rows = []
    rows = []
    for i, row in enumerate(raw_rows):
        if isinstance(row, dict):
            rows.append(row)
        else:
            warnings.append(LoadWarning(code="bad_row", message=f"results[{i}] is not an object, skipped", file=origin))
    return ResultsFile(config, rows, warnings, reported=avg_row(rows), report_label=REPORT_LABEL)


# ---- the text report / stdout table (fallback) ---------------------------------------


def looks_like_report(head: str) -> bool:
    return head.startswith("Eval config\n") or re.search(r"(?m)^seed +\| score +\|", head) is not None


def parse_report(text: str, origin: str) -> ResultsFile:
    """§4: config JSON (if any) and the table; `-` is null, the avg row is kept apart as the report."""
    warnings: list[LoadWarning] = [LoadWarning(code="rounded_values", message=ROUNDING_NOTE, file=origin)]
    config: dict[str, Any] = {}
    if text.startswith("Eval config\n"):
        head, _sep, _rest = text[len("Eval config\n"):].partition("\n\nResults\n")
        try:
            parsed = json.loads(head)
            config = parsed if isinstance(parsed, dict) else {}
        except ValueError:
            warnings.append(LoadWarning(code="bad_report", message="the report's config block is not JSON", file=origin))
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"^seed +\|", line)), None)
    if start is None:
        warnings.append(LoadWarning(code="bad_report", message="no results table (no line starting `seed |`)", file=origin))
        return ResultsFile(config, [], warnings, from_text=True)
    headers = [_HEADER_ALIASES.get(h.strip(), h.strip()) for h in lines[start].rstrip().split(" | ")]
    names = dict(TABLE_COLUMNS)
    fields = [names.get(h, h) for h in headers]
    rows: list[dict[str, Any]] = []
    reported: dict[str, Any] = {}
    for number, line in enumerate(lines[start + 2:], start=start + 3):
        if not line.strip() or "|" not in line:
            break
        cells = [c.strip() for c in line.rstrip().split(" | ", len(fields) - 1)]
        if len(cells) != len(fields):
            warnings.append(LoadWarning(code="bad_row", message=f"line {number}: {len(cells)} cells, expected {len(fields)}",
                                        file=origin, line=number))
            continue
        if cells[0] == "avg":
            reported = {h: _cell_value(h, c) for h, c in zip(headers, cells, strict=True) if h not in ("seed", "error")}
            continue
        row = {f: _cell_value(f, c) for f, c in zip(fields, cells, strict=True)}
        if not isinstance(row.get("seed"), int):
            warnings.append(LoadWarning(code="bad_row", message=f"line {number}: seed {cells[0]!r} is not an integer",
                                        file=origin, line=number))
            continue
        rows.append(row)
    return ResultsFile(config, rows, warnings, reported=reported, report_label=REPORT_TEXT_LABEL, from_text=True)


def _cell_value(name: str, cell: str) -> Any:
    if cell == "-":
        return None
    if name == "error":
        return cell
    try:
        return int(cell) if name in ("seed", "tokens") else float(cell)
    except ValueError:
        try:
            return float(cell)
        except ValueError:
            return cell


# ---- rows: results joined with traces ------------------------------------------------


@dataclass
class RowsBuild:
    rows: list[SampleRow]
    warnings: list[LoadWarning]
    facts: dict[int, TraceFacts]


def rows_from(run_id: str, result_rows: Sequence[Mapping[str, Any]] | None,
              traces_by_seed: Mapping[int, Any]) -> list[SampleRow]:
    """SampleRows from result rows (None = no results file) and seed -> trace dicts."""
    return build_rows(run_id, result_rows, traces_by_seed).rows


def build_rows(run_id: str, result_rows: Sequence[Mapping[str, Any]] | None, traces_by_seed: Mapping[int, Any],
               *, origin: str | None = None, trace_files: Mapping[int, str] | None = None) -> RowsBuild:
    """Rows plus the run-level warnings that explain them (computed figures, seed mismatches, NaN).

    Result rows win for every figure they hold; trace figures fill the gaps (tokens and
    cost per §6.4, marked computed) and are kept in `metrics` when they disagree.
    """
    warnings: list[LoadWarning] = []
    trace_files = trace_files or {}
    facts = {seed: trace_facts(trace, trace_files.get(seed)) for seed, trace in traces_by_seed.items()}
    for seed, fact in facts.items():
        for w in fact.warnings:
            update = {"message": f"seed {seed}: {w.message}", "file": w.file or trace_files.get(seed)}
            warnings.append(w.model_copy(update=update))
    notes = _Notes()
    rows: list[SampleRow] = []
    attempts: dict[str, int] = {}
    result_seeds: set[int] = set()
    for index, result in enumerate(result_rows or []):
        seed = result.get("seed")
        seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
        sample_id = str(seed) if seed is not None else "seed-unknown"
        attempt = attempts.get(sample_id, 0)
        attempts[sample_id] = attempt + 1
        if attempt == 1:
            notes.duplicates.append(sample_id)
        if seed is None:
            notes.no_seed.append(index)
        else:
            result_seeds.add(seed)
        fact = facts.get(seed) if seed is not None and attempt == 0 else None
        rows.append(_result_row(run_id, sample_id, attempt, result, fact, notes))
    trace_only = sorted(set(facts) - result_seeds)
    for seed in trace_only:
        rows.append(_trace_row(run_id, seed, facts[seed], has_results=result_rows is not None))
    rows.sort(key=lambda r: (r.sort_key, r.attempt))
    warnings.extend(notes.warnings(origin))
    if result_rows is None and facts:
        warnings.append(LoadWarning(code="no_results", file=origin, message=(
            "no results file: outcome scores are not available; each score is the mean of the trace's step rewards "
            "(the CLI's reward_mean fallback)")))
        no_reward = [s for s in sorted(facts) if facts[s].step_reward_mean is None]
        if no_reward:
            warnings.append(LoadWarning(code="no_rewards", file=origin, message=(
                f"seed(s) {_seeds(no_reward)}: the trace holds no environment reward, so no score")))
    elif result_rows is not None and facts:
        errored = {int(r.sample_id) for r in rows if r.error is not None and r.sample_id.lstrip("-").isdigit()}
        missing = sorted(result_seeds - set(facts))
        failed = [s for s in missing if s in errored]
        if trace_only or len(failed) < len(missing):
            parts = []
            if missing:
                parts.append(f"only in the results: {_seeds(missing)}"
                             + (f" (failed, so no trace expected: {_seeds(failed)})" if failed else ""))
            if trace_only:
                parts.append(f"only in the traces: {_seeds(trace_only)}")
            warnings.append(LoadWarning(code="seed_mismatch", file=origin, message=(
                f"results ({len(result_seeds)} seeds) and traces ({len(facts)} seeds) disagree on the seed set; all are "
                f"counted: {'; '.join(parts)}")))
        elif failed:
            warnings.append(LoadWarning(code="no_trace_for_errors", file=origin, message=(
                f"seed(s) {_seeds(failed)} failed and have no trace (normal: the task app returned none)")))
    return RowsBuild(rows=rows, warnings=warnings, facts=facts)


@dataclass
class _Notes:
    """Per-seed observations gathered while building rows, reported as one warning each."""

    tokens_computed: list[str] = field(default_factory=list)
    cost_computed: list[str] = field(default_factory=list)
    differ: list[str] = field(default_factory=list)
    nan: list[str] = field(default_factory=list)
    misreported: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    no_seed: list[int] = field(default_factory=list)

    def warnings(self, origin: str | None) -> list[LoadWarning]:
        out = []
        if self.tokens_computed:
            out.append(("tokens_computed", f"tokens computed by evaldash from the traces' LM events for seed(s) "
                        f"{', '.join(self.tokens_computed)} (the results file has none)"))
        if self.cost_computed:
            out.append(("cost_computed", f"cost computed by evaldash from the traces' LM events for seed(s) "
                        f"{', '.join(self.cost_computed)} (the results file has none)"))
        for text in self.differ:
            out.append(("figures_differ", text))
        for text in self.nan:
            out.append(("nan_value", text))
        if self.misreported:
            out.append(("possibly_misreported", f"seed(s) {', '.join(self.misreported)}: score 0 with no outcome_score; "
                        "possibly misreported (a task app that sets only outcome_reward yields 0 in synth-ai 0.4.4)"))
        if self.duplicates:
            out.append(("duplicate_seed", f"seed(s) {', '.join(self.duplicates)} appear more than once in the results; "
                        "later rows are shown as further attempts"))
        if self.no_seed:
            out.append(("no_seed", f"result row(s) {', '.join(map(str, self.no_seed))} have no seed; shown as 'seed-unknown'"))
        return [LoadWarning(code=code, message=msg, file=origin) for code, msg in out]


def _seeds(seeds: Sequence[int]) -> str:
    return ", ".join(map(str, seeds))


def _number(value: Any) -> tuple[float | None, bool]:
    """(value as float or None, was it NaN/inf): task apps can write NaN, json.loads accepts it."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, False
    if math.isnan(value) or math.isinf(value):
        return None, True
    return float(value), False


def _error_kind(error: str) -> str:
    head = error.split(":", 1)[0].strip()
    return head if ":" in error and re.fullmatch(r"[A-Za-z_][\w.]*", head) else "exception"


def _result_row(run_id: str, sample_id: str, attempt: int, result: Mapping[str, Any], fact: TraceFacts | None,
                notes: _Notes) -> SampleRow:
    values: dict[str, float | None] = {}
    nan_keys = []
    for key in NUMERIC_FIELDS:
        values[key], was_nan = _number(result.get(key))
        if was_nan:
            nan_keys.append(key)
            notes.nan.append(f"seed {sample_id}: {key} is {result.get(key)} in the results; shown as missing")
    score_key = next((k for k in SCORE_KEYS if values.get(k) is not None), None)
    score = values[score_key] if score_key else None
    error = result.get("error") if isinstance(result.get("error"), str) and result.get("error") else None
    flags: list[str] = []
    if nan_keys:
        flags.append("nan_value")
    if score == 0 and values["outcome_score"] is None and values["outcome_reward"] is None and error is None:
        flags.append("possibly_misreported")
        notes.misreported.append(sample_id)
    raw_tokens, _nan = _number(result.get("tokens"))
    tokens = int(raw_tokens) if raw_tokens else None  # 0 means "none" upstream (§2)
    metrics: dict[str, Any] = {"score_key": score_key} if score_key else {}
    if values["outcome_reward"] is not None:
        metrics["outcome_reward"] = values["outcome_reward"]
    known = {"seed", "score", "reward_mean", "outcome_score", "outcome_reward", "events_score", "latency_ms", "verifier_score",
             "tokens", "cost_usd", "error", "trace"}
    metrics.update({k: v for k, v in result.items() if k not in known and v is not None})
    tokens_in = tokens_out = None
    computed = False
    cost = values["cost_usd"]
    latency = values["latency_ms"]
    if fact is not None:
        metrics.update(_fact_metrics(fact))
        if tokens is None and fact.tokens_total is not None:
            tokens, tokens_in, tokens_out, computed = fact.tokens_total, fact.tokens_in, fact.tokens_out, True
            notes.tokens_computed.append(sample_id)
        elif tokens is not None and fact.tokens_total is not None:
            if tokens == fact.tokens_total:
                tokens_in, tokens_out = fact.tokens_in, fact.tokens_out
            else:
                notes.differ.append(f"seed {sample_id}: the results say {tokens} tokens, the trace's LM events sum to "
                                    f"{fact.tokens_total}; the results' figure is kept")
        if cost is None and fact.cost_usd is not None:
            cost = fact.cost_usd
            metrics["cost_computed"] = True
            notes.cost_computed.append(sample_id)
        elif cost is not None and fact.cost_usd is not None and not math.isclose(cost, fact.cost_usd, rel_tol=1e-6):
            notes.differ.append(f"seed {sample_id}: the results say cost ${cost:g}, the trace's LM events sum to "
                                f"${fact.cost_usd:g}; the results' figure is kept")
    return SampleRow(
        run_id=run_id, sample_id=sample_id, attempt=attempt, sort_key=_sort_key(sample_id), score=score,
        correct=fact.correct if fact else None,
        correct_rule="trace system_state_after.correct" if fact and fact.correct is not None else None,
        reward_mean=values["reward_mean"], outcome_score=values["outcome_score"], events_score=values["events_score"],
        verifier_score=values["verifier_score"], latency_ms=latency, tokens_in=tokens_in, tokens_out=tokens_out,
        tokens_total=tokens, tokens_computed=computed, cost_usd=cost, error=error,
        error_kind=_error_kind(error) if error else None,
        finish_reason="error" if error else ("max_steps" if fact and fact.truncated else None),
        n_messages=fact.n_messages if fact else None, attribution="seed", has_transcript=fact is not None,
        flags=tuple(flags), metrics=metrics,
    )


def _trace_row(run_id: str, seed: int, fact: TraceFacts, *, has_results: bool) -> SampleRow:
    """A seed known only from its trace: score = mean step reward, as the CLI's reward_mean fallback."""
    metrics = {**_fact_metrics(fact), "score_key": "trace step rewards (mean)"}
    if fact.latency_ms is not None:
        metrics["latency_source"] = "sum of the trace's LM call latencies"
    if fact.cost_usd is not None:
        metrics["cost_computed"] = True
    flags = ("no_result_row",) if has_results else ("outcome_unavailable",)
    return SampleRow(
        run_id=run_id, sample_id=str(seed), attempt=0, sort_key=_sort_key(str(seed)), score=fact.step_reward_mean,
        correct=fact.correct, correct_rule="trace system_state_after.correct" if fact.correct is not None else None,
        reward_mean=fact.step_reward_mean, latency_ms=fact.latency_ms, tokens_in=fact.tokens_in, tokens_out=fact.tokens_out,
        tokens_total=fact.tokens_total, tokens_computed=fact.tokens_total is not None, cost_usd=fact.cost_usd,
        finish_reason="max_steps" if fact.truncated else None, n_messages=fact.n_messages, attribution="seed",
        has_transcript=True, flags=flags, metrics=metrics,
    )


def _fact_metrics(fact: TraceFacts) -> dict[str, Any]:
    out: dict[str, Any] = {"trace_shape": fact.shape, "n_lm_calls": fact.n_lm_calls}
    if fact.step_reward_sum is not None:
        out[STEP_REWARD_LABEL] = fact.step_reward_sum
    if fact.final_reward is not None:
        out["final env reward"] = fact.final_reward
    if fact.tokens_total is not None:
        out["trace_tokens_total"] = fact.tokens_total
        out["trace_token_sources"] = list(fact.token_sources)
    if fact.cost_usd is not None:
        out["trace_cost_usd"] = fact.cost_usd
    if fact.model:
        out["trace_model"] = fact.model
    if fact.correlation_id:
        out["trace_correlation_id"] = fact.correlation_id
    if fact.terminated is not None:
        out["terminated"] = fact.terminated
    if fact.truncated is not None:
        out["truncated"] = fact.truncated
    return out


def _sort_key(sample_id: str) -> tuple[int, str]:
    try:
        return (int(sample_id), sample_id)
    except ValueError:
        return numeric_sort_key(sample_id)
