"""`evaldash`: the headless side of the dashboard, for terminals and CI jobs.

The `--json` shapes are a promise to users' scripts: extend them, never rename keys.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from loaders import query
from loaders.catalog import Catalog, build_catalog, loader_for
from loaders.errors import SourceError
from loaders.schema import LoadWarning


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evaldash", description="Summarise eval results from logs, traces and backends.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_sum = sub.add_parser("summary", help="one row per run")
    p_sum.add_argument("sources", nargs="+", help="files, folders or backend URLs (URL#job_id,... for explicit jobs)")
    p_sum.add_argument("--json", action="store_true", help='print {"runs": [...]}')
    p_samples = sub.add_parser("samples", help="the per-sample rows of one run")
    p_samples.add_argument("sources", nargs="+")
    p_samples.add_argument("--run", required=True, help="run id (see `evaldash summary`)")
    p_samples.add_argument("--json", action="store_true", help='print {"rows": [...]}')
    _register_extensions(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args)) if hasattr(args, "handler") else _COMMANDS[args.command](args)
    except SourceError as exc:
        print(f"evaldash: error: {exc}", file=sys.stderr)
        return 1


def _register_extensions(sub: argparse._SubParsersAction) -> None:
    """Subcommands that live in their own modules add themselves here."""
    try:
        from loaders import cli_compare
    except ImportError:
        return
    cli_compare.add_parser(sub)


def load_catalog(sources: Sequence[str]) -> Catalog:
    """All runs of all sources; exit 1 (via SourceError) when a named source cannot be read at all."""
    catalog = build_catalog(sources)
    for source in sources:
        problems = catalog.problems.get(source, [])
        fatal = [p for p in problems if p.code in ("unreadable", "empty_folder")]
        has_runs = any(e.leaf == source or e.leaf.startswith(source.rstrip("/") + "/") for e in catalog.entries.values())
        if fatal and not has_runs:
            first = fatal[0]
            raise SourceError(first.file or source, first.message, line=first.line)
    for source, problems in catalog.problems.items():
        for p in problems:
            print(f"evaldash: warning: {p.where() or source}: {p.message}", file=sys.stderr)
    return catalog


def _print_run_warnings(warnings: Sequence[LoadWarning], run_id: str) -> None:
    for w in warnings:
        print(f"evaldash: warning: [{run_id}] {w.where() + ': ' if w.where() else ''}{w.message}", file=sys.stderr)


def cmd_summary(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.sources)
    summaries = []
    for entry in catalog.entries.values():
        figures = loader_for(entry).load_figures(entry.native_run_id, entry.run)  # no rows read when a parse cache holds them
        summaries.append(query.summarize(entry.run, figures=figures))
        _print_run_warnings(entry.run.warnings, entry.run_id)
    if args.json:
        print(json.dumps({"runs": [_jsonable(s) for s in summaries]}, indent=2, default=str))
        return 0
    headers = ["run_id", "kind", "eval", "model", "samples", "attempts", "score", "reported", "errors", "tokens", "cost_usd"]
    table = [[s["run_id"], s["source_kind"], s["eval_name"] or "-", s["model"] or "-", s["n_samples"], s["n_attempts"],
              _fmt(s["score_mean"]), _fmt((s["reported"] or {}).get("value")), s["n_errors"], _fmt(s["tokens_total"]),
              _fmt(s["cost_usd_total"])] for s in summaries]
    print(render_table(headers, table))
    for s in summaries:
        if not s["has_sample_ids"]:
            print(f"note: {s['run_id']}: {NO_IDS_NOTE.get(s['attribution'], 'the log has no sample ids')}")
    return 0


def cmd_samples(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.sources)
    entry = catalog.entries.get(args.run)
    if entry is None:
        known = ", ".join(list(catalog.entries)[:10])
        raise SourceError(" ".join(args.sources), f"no run {args.run!r} (known: {known or 'none'})")
    rows = loader_for(entry).load_samples(entry.native_run_id)
    _print_run_warnings(entry.run.warnings, entry.run_id)
    if not entry.run.has_sample_ids:
        print(f"evaldash: note: run {entry.run_id}: {NO_IDS_NOTE.get(entry.run.attribution, 'no sample ids')}", file=sys.stderr)
    frame = query.rows_frame(rows)
    if args.json:
        records = [_jsonable(r) for r in frame.astype(object).where(frame.notna(), None).to_dict(orient="records")]
        print(json.dumps({"run_id": entry.run_id, "rows": records}, indent=2, default=str))
        return 0
    cols = ["sample_id", "attempt", "score", "correct", "tokens_total", "cost_usd", "finish_reason", "error"]
    print(render_table(cols, [[_fmt(v) for v in rec] for rec in frame[cols].astype(object).itertuples(index=False)]))
    return 0


NO_IDS_NOTE = {
    "aggregate_only": "the log has no sample ids; figures are aggregates of its records, no per-sample rows",
    "inferred": "the log has no sample ids; samples were grouped by record order (checked, but inferred)",
    "log_at_end": "the log has no sample ids on its matches; attempts were paired with log_at_end records",
}

_COMMANDS = {"summary": cmd_summary, "samples": cmd_samples}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if hasattr(obj, "item") and not isinstance(obj, str | bytes):
        try:
            return _jsonable(obj.item())
        except (AttributeError, ValueError):
            return str(obj)
    return obj


def _fmt(value: Any) -> str:
    if value is None or value is getattr(__import__("pandas"), "NA", object()):
        return "-"
    try:
        if isinstance(value, float) and math.isnan(value):
            return "-"
    except TypeError:
        pass
    if isinstance(value, float):
        text = f"{value:.4f}".rstrip("0").rstrip(".")
        return text or "0"
    return str(value)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[("-" if c is None else str(c)).replace("\n", " ")[:80] for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
