"""`evaldash compare`: run B against run A with paired significance, usable as a CI gate.

Registered by `loaders.cli._register_extensions`. `--json` prints the `compare.compare_runs`
dict unchanged (with 3+ runs: `compare.compare_many`, each run against the first).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from loaders import compare
from loaders.errors import SourceError
from loaders.schema import Run, SampleRow


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="compare runs on the samples they share (paired tests)")
    p.add_argument("sources", nargs="+", help="files, folders or backend URLs holding the runs")
    p.add_argument("--runs", required=True, help="A,B[,C...]: run ids (see `evaldash summary`); the first is the baseline")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 when B is significantly worse than A")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--id-map", choices=compare.ID_MAPS, default="exact",
                   help="how sample ids match: exact, or numeric (arc.dev.12 = seed 12)")
    p.set_defaults(handler=cmd_compare)


def _load(sources: list[str], run_ids: list[str]) -> list[tuple[Run, list[SampleRow]]]:
    from loaders.catalog import loader_for
    from loaders.cli import _print_run_warnings, load_catalog

    catalog = load_catalog(sources)
    out = []
    for run_id in run_ids:
        entry = catalog.entries.get(run_id)
        if entry is None:
            known = ", ".join(list(catalog.entries)[:10])
            raise SourceError(" ".join(sources), f"no run {run_id!r} (known: {known or 'none'})")
        rows = loader_for(entry).load_samples(entry.native_run_id)
        if entry.run_id != entry.native_run_id:
            rows = [r.model_copy(update={"run_id": entry.run_id}) for r in rows]
        _print_run_warnings(entry.run.warnings, entry.run_id)
        out.append((entry.run, rows))
    return out


def cmd_compare(args: argparse.Namespace) -> int:
    from loaders.cli import _jsonable

    run_ids = [r.strip() for r in args.runs.split(",") if r.strip()]
    if len(run_ids) < 2:
        raise SourceError(args.runs, "--runs needs at least two run ids: A,B")
    if not 0 < args.alpha < 1:
        raise SourceError(str(args.alpha), "--alpha must be between 0 and 1")
    loaded = _load(args.sources, run_ids)
    if len(loaded) == 2:
        (run_a, rows_a), (run_b, rows_b) = loaded
        results = [compare.compare_runs(run_a, rows_a, run_b, rows_b, alpha=args.alpha, id_map=args.id_map)]
        payload: dict[str, Any] = results[0]
    else:
        payload = compare.compare_many(loaded, baseline=run_ids[0], alpha=args.alpha, id_map=args.id_map)
        results = payload["comparisons"]
    if args.json:
        print(json.dumps(_jsonable(payload), indent=2, default=str))
    else:
        print("\n\n".join(render_comparison(r) for r in results))
    regressed = any(r["regression"] for r in results)
    return 1 if args.fail_on_regression and regressed else 0


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _signed(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:+.{digits}f}"


def render_comparison(c: dict[str, Any]) -> str:
    """Readable text of one `compare_runs` result."""
    lines = []
    for side in ("a", "b"):
        block = c[f"run_{side}"]
        h = block["headline"]
        lines.append(f"{side.upper()}: {block['run_id']}  {block['display_name']}  score {_num(h['estimate'])} "
                     f"[{_num(h['low'])}, {_num(h['high'])}] ({h['method']}, n={h['n']})")
    lines.append(f"aligned samples: {c['n_both']} (pairs {c['n_pairs']}, id map {c['id_map']}, unit {c['unit']}, "
                 f"used {c['n_used']}, excluded {c['n_excluded']})")
    for side in ("a", "b"):
        ids = c[f"only_{side}"]
        if ids:
            lines.append(f"only in {side.upper()}: {len(ids)} ({', '.join(ids[:8])}{', ...' if len(ids) > 8 else ''})")
    lines.append(f"improved {c['improved']}, regressed {c['regressed']}, unchanged {c['unchanged']}")
    low, high = c["delta_ci"]
    lines.append(f"delta B - A: {_signed(c['delta'])}  {round(c['confidence'] * 100)}% CI [{_signed(low)}, {_signed(high)}] "
                 f"({c['delta_ci_method']})")
    p = c["p_value"]
    lines.append(f"test: {c['test']}: p = {'-' if p is None else f'{p:.4g}'} (n = {c['test_n']})"
                 + (f", {c['test_note']}" if c["test_note"] else ""))
    verdict = ("REGRESSION: B is significantly worse than A" if c["regression"]
               else "improvement: B is significantly better than A" if c["improvement"]
               else "no significant difference")
    lines.append(f"verdict at alpha {c['alpha']}: {verdict}")
    if c["became_flaky"] or c["stopped_being_flaky"]:
        lines.append(f"became flaky: {len(c['became_flaky'])}, stopped being flaky: {len(c['stopped_being_flaky'])}")
    for name, u in c["usage"].items():
        if u["n"]:
            lines.append(f"{name}: A {u['total_a']:.6g}, B {u['total_b']:.6g}, delta {u['delta']:+.6g} (total over {u['n']} "
                         "pairs where both are known)")
    lines.extend(f"warning: {w}" for w in c["warnings"])
    return "\n".join(lines)
