"""Issue 10's benchmark: one command, one table, every figure measured in this run against its target.

    .venv/bin/python -m benchmarks.run                 # ~1 GB logs (takes a while: run it in the background)
    .venv/bin/python -m benchmarks.run --size-gb 0.5   # smaller logs, same row counts
    .venv/bin/python -m benchmarks.run --quick         # ~20 MB logs, a smoke test in under two minutes

Data is generated into a temporary folder (deleted at the end): an openai-evals log (100k samples, few-shot
prompts, a few 50 KB ones), a nanoeval log (33k tasks x 3 attempts, Step/FinalResult convos, interleaved), a
second 100k-sample evals log to compare with, and a synth traces folder of 20k seeds. Every measurement runs in
its own child process, so peak memory is that of the thing measured, and the pandas peer runs under a memory
and time cap (reported as "> X" when it blows past). Times are wall-clock seconds on a warm page cache; ingest
ratios use CPU seconds of the same process, which other load on the machine disturbs less, and compare like
with like: best of three passes against the bare parse's best of three, one pass against the pandas route's one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import synthetic  # noqa: E402

PASSES = 3  # ingest and bare parse: the best of this many passes each (the machine's own noise is a few %)
PEER_MEMORY_CAP = 12 << 30
PEER_TIME_CAP = 300.0
MB = 1 << 20


# --- children: each prints one JSON object on its last stdout line ---------------------------------------------------


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _status(pid: int | str, field: str) -> int:
    """A memory figure of /proc/<pid>/status in bytes (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _peak() -> int:
    """This process's peak RSS. VmHWM, not ru_maxrss: a forked child inherits the parent's ru_maxrss across exec."""
    return _status("self", "VmHWM")


def _deep_size(rows: list[Any]) -> int:
    """Bytes the row objects hold (the model, its __dict__, and each distinct non-singleton value)."""
    seen: set[int] = set()
    total = 0
    stack: list[Any] = []
    for row in rows:
        total += sys.getsizeof(row) + sys.getsizeof(row.__dict__)
        stack.extend(row.__dict__.values())
    while stack:
        value = stack.pop()
        if value is None or isinstance(value, bool) or id(value) in seen:
            continue
        seen.add(id(value))
        total += sys.getsizeof(value)
        if isinstance(value, tuple | list):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
    return total


def child_bare(path: str) -> dict[str, Any]:
    import orjson

    best = None
    for _ in range(PASSES):
        wall, cpu = time.perf_counter(), time.process_time()
        with open(path, "rb", buffering=1 << 20) as fh:  # the same read buffer as ours: the floor is the parse
            for line in fh:
                orjson.loads(line)
        took = (time.perf_counter() - wall, time.process_time() - cpu)
        best = took if best is None or took[1] < best[1] else best
    return {"wall": best[0], "cpu": best[1]}


def _ingest(path: str) -> tuple[Any, list[Any], float, float]:
    from loaders.sources.recorder import RecorderLoader

    wall, cpu = time.perf_counter(), time.process_time()
    loader = RecorderLoader(path)
    runs = loader.list_runs().runs
    rows = [row for run in runs for row in loader.load_samples(run.run_id)]
    return loader, rows, time.perf_counter() - wall, time.process_time() - cpu


def child_ingest(path: str, transcripts: int) -> dict[str, Any]:
    """Ours, cache off: runs + every row, then transcript opens from the loaded index; then the whole ingest
    again, PASSES - 1 times.

    The first ingest in a fresh process pays ~0.35 s of page faults the second does not (the heap is warm), as
    the bare parse's first pass does: the bare parse reports its best of PASSES passes, so the ratio against it
    uses our best of PASSES as well; the pandas peer runs once, so its ratio uses our first pass.
    """
    import gc

    import loaders.sources.recorder  # noqa: F401 - imports are not ingest

    gc.collect()
    base = _rss()
    loader, rows, took_wall, took_cpu = _ingest(path)
    peak = _peak() - base
    gc.collect()
    retained = _rss() - base
    rows_size = _deep_size(rows)
    runs = {row.run_id for row in rows}
    rng = random.Random(10)
    times = []
    for row in rng.sample(rows, min(transcripts, len(rows))):
        t = time.perf_counter()
        transcript = loader.load_transcript(row.run_id, row.sample_id, row.attempt)
        times.append(time.perf_counter() - t)
        assert transcript.items
    times.sort()
    n_rows = len(rows)
    del loader, rows, transcript
    gc.collect()
    best_wall, best_cpu = took_wall, took_cpu
    for _ in range(PASSES - 1):
        again = _ingest(path)
        best_wall, best_cpu = min(best_wall, again[2]), min(best_cpu, again[3])
        del again
        gc.collect()
    return {"wall": took_wall, "cpu": took_cpu, "best_wall": best_wall, "best_cpu": best_cpu,
            "rows": n_rows, "runs": len(runs), "peak": peak, "retained": retained, "rows_size": rows_size,
            "tx_median": statistics.median(times), "tx_p95": times[int(0.95 * (len(times) - 1))]}


def child_pandas(path: str, dialect: str) -> dict[str, Any]:
    """The route of openai/evals' example notebooks: read_json(lines=True), filter on the record type, json_normalize."""
    import pandas as pd

    wall, cpu = time.perf_counter(), time.process_time()
    df = pd.read_json(path, lines=True)
    if dialect == "evals":
        frames = [pd.json_normalize(df[df["type"] == kind]["data"].tolist()) for kind in ("sampling", "match")]
    else:
        frames = [pd.json_normalize(df[df["record_type"] == kind]["data"].tolist()) for kind in ("extra",)]
        frames.append(df[df["record_type"] == "match"])
    n = sum(len(f) for f in frames)
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "peak": _peak(), "records": n}


def child_synth(path: str) -> dict[str, Any]:
    from loaders.registry import resolve

    wall = time.perf_counter()
    loader = resolve(path)
    runs = loader.list_runs().runs
    rows = [row for run in runs for row in loader.load_samples(run.run_id)]
    return {"wall": time.perf_counter() - wall, "rows": len(rows)}


def _apptest(sources: list[str]) -> Any:
    """An AppTest of the app, with what a real server does once at startup (not on a page) already done."""
    from streamlit.testing.v1 import AppTest

    os.environ["EVALDASH_SOURCES"] = ",".join(sources)
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=1800)
    # A server scans installed packages for components in Runtime.__init__, before serving anything; AppTest does it
    # in its first run (~0.25 s of package metadata), which would count as page time here. Done up front instead.
    if getattr(at, "_bidi_component_manager", False) is None:
        from streamlit.components.v2.component_manager import BidiComponentManager

        manager = BidiComponentManager()
        manager.discover_and_register_components(start_file_watching=False)
        at._bidi_component_manager = manager
    return at


def _check(at: Any, what: str) -> None:
    if at.exception:
        raise RuntimeError(f"{what}: {at.exception[0].message}")


def _preimport() -> None:
    """What a running server has imported before any page shows; not part of the figures."""
    import altair  # noqa: F401
    import streamlit.testing.v1  # noqa: F401

    import dashboard.data  # noqa: F401
    import loaders.query
    import loaders.sources  # noqa: F401


def child_runs_page(path: str) -> dict[str, Any]:
    """A fresh process (a restarted server): time until the Runs page lists the log's run."""
    started = time.perf_counter()
    _preimport()
    at = _apptest([path])
    t = time.perf_counter()
    at.run()
    took = time.perf_counter() - t
    _check(at, "Runs page")
    shown = [df.value for df in at.dataframe]
    n_runs = sum(len(v) for v in shown)
    return {"page": took, "process": time.perf_counter() - started, "runs_shown": n_runs}


def _warm(at: Any, what: str, reruns: int) -> float:
    at.run()  # cold: loads and caches
    _check(at, what)
    times = []
    for _ in range(reruns):
        t = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t)
        _check(at, what)
    return statistics.median(times)


def child_pages(path_a: str, path_b: str, reruns: int) -> dict[str, Any]:
    """Warm reruns of the summary, per-seed (filtered) and compare pages on 100k-row runs."""
    _preimport()
    from loaders.catalog import build_catalog

    entries = list(build_catalog([path_a, path_b]).entries.values())
    a = next(e.run_id for e in entries if e.leaf == path_a)
    b = next(e.run_id for e in entries if e.leaf == path_b)
    views = ROOT / "dashboard" / "views"
    out: dict[str, Any] = {}
    if (views / "run.py").is_file():
        at = _apptest([path_a, path_b])
        at.switch_page("views/run.py")
        at.query_params["run"] = a
        out["summary"] = _warm(at, "summary page", reruns)
    if (views / "seeds.py").is_file():
        at = _apptest([path_a, path_b])
        at.switch_page("views/seeds.py")
        at.query_params.update({"run": a, "status": "failed", "q": "dev.9"})
        out["seeds"] = _warm(at, "per-seed page", reruns)
    if (views / "compare.py").is_file():
        at = _apptest([path_a, path_b])
        at.switch_page("views/compare.py")
        at.query_params.update({"runs": f"{a},{b}", "baseline": a})
        out["compare"] = _warm(at, "compare page", reruns)
    return out


CHILDREN = {"bare": child_bare, "ingest": child_ingest, "pandas": child_pandas, "synth": child_synth,
            "runs_page": child_runs_page, "pages": child_pages}


# --- the parent: generate, measure, print ------------------------------------------------------------------------------


def _child(name: str, *args: Any, env: dict[str, str] | None = None, cap: int | None = None,
           timeout: float | None = None) -> tuple[dict[str, Any] | None, str]:
    """Run one measurement in a fresh interpreter; (result, "") or (None, why it failed).

    With `cap`, the child's RSS is polled from /proc and the child killed past it (or past `timeout`),
    so the pandas peer cannot take the machine down.
    """
    cmd = [sys.executable, "-m", "benchmarks.run", "--child", name, *map(str, args)]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=out, stderr=err, text=True)
        why = ""
        while proc.poll() is None:
            took = time.perf_counter() - started
            if cap and _status(proc.pid, "VmRSS") > cap:
                why = f"> {took:.0f} s (killed at the {cap / (1 << 30):.0f} GB memory cap)"
            elif timeout and took > timeout:
                why = f"> {timeout:.0f} s (time cap)"
            if why:
                proc.kill()
                proc.wait()
                return None, why
            time.sleep(0.1)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        tail = (stderr.strip().splitlines() or ["?"])[-1]
        return None, f"failed: {tail[:120]}"
    return json.loads(stdout.strip().splitlines()[-1]), ""


def _calibrate(tmp: Path, make: Any, unit_bytes: float, knob: str, lo: int, hi: int, n: int) -> int:
    """The knob value (few-shot examples / tool output chars) that makes one unit weigh `unit_bytes`."""
    sizes = []
    for k in (lo, hi):
        path = tmp / f"calibrate_{k}.jsonl"
        make(path, n, **{knob: k})
        sizes.append(path.stat().st_size / n)
        path.unlink()
    per = (sizes[1] - sizes[0]) / (hi - lo)
    return max(0, round(lo + (unit_bytes - sizes[0]) / per)) if per > 0 else lo


def generate(tmp: Path, size_gb: float, quick: bool) -> dict[str, Any]:
    n_evals = 4000 if quick else 100_000
    n_tasks = 1300 if quick else 33_000
    n_seeds = 500 if quick else 20_000
    target = (20 * MB) if quick else size_gb * (1 << 30)

    def evals(path: Path, n: int, **kw: Any) -> None:
        synthetic.evals_log(path, n, skill=0.7, run_id="261201090000BENCHEVALS", model="gpt-4o-mini", **kw)

    def nano(path: Path, n: int, **kw: Any) -> None:
        synthetic.nanoeval_log(path, n, 3, skill=0.5, run_id="261201100000BENCHNANO", **kw)

    few_shot = _calibrate(tmp, evals, target / n_evals, "few_shot", 0, 20, 300)
    tool_chars = _calibrate(tmp, nano, target / n_tasks, "tool_chars", 0, 2000, 100)  # per task (3 attempts)
    paths = {"evals": tmp / "evals_big.jsonl", "nano": tmp / "nanoeval_big.jsonl", "compare": tmp / "evals_compare.jsonl",
             "synth": tmp / "synth_traces"}
    t = time.perf_counter()
    evals(paths["evals"], n_evals, few_shot=few_shot, big_every=max(n_evals // 5, 1))
    nano(paths["nano"], n_tasks, tool_chars=tool_chars)
    synthetic.evals_log(paths["compare"], n_evals, skill=0.75, run_id="261201110000BENCHCOMPAR", model="gpt-4o", seed=7)
    synthetic.synth_run(paths["synth"], n_seeds, skill=0.6)
    return {"paths": paths, "n_evals": n_evals, "n_tasks": n_tasks, "n_seeds": n_seeds, "few_shot": few_shot,
            "tool_chars": tool_chars, "seconds": time.perf_counter() - t}


def _seconds(why: str) -> float:
    """The seconds in a "> N s (...)" message."""
    try:
        return float(why.split()[1])
    except (IndexError, ValueError):
        return 0.0


def _fmt_s(v: float) -> str:
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-gb", type=float, default=1.0, help="size of each big log (default 1)")
    parser.add_argument("--quick", action="store_true", help="~20 MB logs and fewer rows: a smoke test")
    parser.add_argument("--reruns", type=int, default=5, help="warm reruns per page (median reported)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        fn = CHILDREN[args.child]
        values = [int(a) if a.isdigit() else a for a in args.args]
        print(json.dumps(fn(*values)))
        return

    table: list[tuple[str, str, str, str]] = []  # figure, measured, target, verdict

    def add(figure: str, measured: str, target: str = "", ok: bool | None = None) -> None:
        table.append((figure, measured, target, "" if ok is None else ("PASS" if ok else "FAIL")))
        print(f"  {figure}: {measured}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="evaldash-bench-") as tmp_name:
        tmp = Path(tmp_name)
        print(f"generating data in {tmp} ...", file=sys.stderr, flush=True)
        gen = generate(tmp, args.size_gb, args.quick)
        paths = gen["paths"]
        sizes = {k: p.stat().st_size for k, p in paths.items() if p.is_file()}
        off = {"EVALDASH_CACHE_DIR": "off"}
        add("data", f"evals {sizes['evals'] / MB:.0f} MB ({gen['n_evals']} samples, {gen['few_shot']} few-shot examples, "
            f"{max(gen['n_evals'] // max(gen['n_evals'] // 5, 1), 1)} prompts of 50 KB); nanoeval {sizes['nano'] / MB:.0f} MB "
            f"({gen['n_tasks']} tasks x 3 attempts, interleaved); compare log {sizes['compare'] / MB:.0f} MB; "
            f"synth {gen['n_seeds']} seeds; generated in {gen['seconds']:.0f} s")
        ingest_wall: dict[str, float] = {}
        for key, label, dialect in (("evals", "openai-evals", "evals"), ("nano", "nanoeval", "nano")):
            path = str(paths[key])
            print(f"measuring {label} ...", file=sys.stderr, flush=True)
            bare, why_bare = _child("bare", path, env=off)
            ours, why_ours = _child("ingest", path, 100, env=off)
            peer, why_peer = _child("pandas", path, dialect, env=off, cap=PEER_MEMORY_CAP, timeout=PEER_TIME_CAP)
            if ours is None or bare is None:
                add(f"{label}: ingest", why_ours or why_bare, ">= 0.8x bare parse", False)
                continue
            ingest_wall[key] = ours["wall"]
            speed = bare["cpu"] / ours["best_cpu"]
            add(f"{label}: ingest to runs + {ours['rows']} rows, first in a fresh process",
                f"{_fmt_s(ours['wall'])} wall, {ours['cpu']:.2f} s CPU")
            add(f"{label}: ingest, best of {PASSES}", f"{_fmt_s(ours['best_wall'])} wall, {ours['best_cpu']:.2f} s CPU")
            add(f"{label}: bare orjson.loads of the same lines (floor), best of {PASSES}",
                f"{_fmt_s(bare['wall'])} wall, {bare['cpu']:.2f} s CPU")
            add(f"{label}: speed vs bare parse (best of {PASSES} each)", f"{speed:.2f}x", ">= 0.8x", speed >= 0.8)
            if peer is not None:
                ratio = peer["cpu"] / ours["cpu"]
                add(f"{label}: pandas route (peer)",
                    f"{_fmt_s(peer['wall'])} wall, {peer['cpu']:.2f} s CPU, peak {peer['peak'] / MB:.0f} MB")
                add(f"{label}: speed vs pandas route (one pass each)", f"{ratio:.1f}x", ">= 10x", ratio >= 10)
            else:  # it gave up (memory or time cap) after `why_peer`'s seconds: at least that much slower
                add(f"{label}: pandas route (peer)", why_peer)
                bound = _seconds(why_peer) / ours["wall"]
                add(f"{label}: speed vs pandas route", f"> {bound:.1f}x (the peer did not finish)", ">= 10x", bound >= 10 or None)
            budget = 300 * MB + ours["rows_size"]
            add(f"{label}: peak RSS during ingest (over the idle process)", f"{ours['peak'] / MB:.0f} MB",
                f"<= 300 MB + rows ({budget / MB:.0f} MB)", ours["peak"] <= budget)
            add(f"{label}: in-memory size of the rows (deep) / whole index retained (RSS)",
                f"{ours['rows_size'] / MB:.0f} MB / {ours['retained'] / MB:.0f} MB")
            limit = ours["wall"] / 200
            add(f"{label}: open one transcript, median of 100", _fmt_s(ours["tx_median"]), f"<= 1/200 of a full parse ({_fmt_s(limit)})",
                ours["tx_median"] <= limit)
            add(f"{label}: open one transcript, p95 of 100", _fmt_s(ours["tx_p95"]), f"<= 1/200 of a full parse ({_fmt_s(limit)})",
                ours["tx_p95"] <= limit)
        synth, why = _child("synth", str(paths["synth"]), env=off)
        add(f"synth traces folder ({gen['n_seeds']} seeds): ingest to runs + rows",
            f"{_fmt_s(synth['wall'])} ({synth['rows']} rows)" if synth else why)

        cache = {"EVALDASH_CACHE_DIR": str(tmp / "cache")}
        print("measuring restart ...", file=sys.stderr, flush=True)
        first, why_first = _child("runs_page", str(paths["evals"]), env=cache)
        again, why_again = _child("runs_page", str(paths["evals"]), env=cache)
        if first and again:
            add("Runs page, first start (parse + write cache)", f"{_fmt_s(first['page'])} (whole process {_fmt_s(first['process'])})")
            ratio = again["page"] / first["page"]
            add("restart: Runs page shows the big evals run again (new process, same file)",
                f"{_fmt_s(again['page'])} = {ratio:.1%} of first start (whole process incl. imports {_fmt_s(again['process'])})",
                "<= 10% of first ingest", ratio <= 0.10 and again["runs_shown"] >= 1)
        else:
            add("restart", why_first or why_again, "<= 10% of first ingest", False)

        print("measuring pages ...", file=sys.stderr, flush=True)
        pages, why = _child("pages", str(paths["evals"]), str(paths["compare"]), args.reruns, env=cache)
        pages = pages or {}
        for key, label, target in (("summary", "summary page warm rerun", 0.5), ("seeds", "per-seed table (filtered) warm rerun", 0.5),
                                   ("compare", "compare two runs warm rerun", 1.0)):
            rows_note = f"{gen['n_evals']}-row run{'s' if key == 'compare' else ''}"
            if key in pages:
                add(f"{label} ({rows_note})", _fmt_s(pages[key]), f"<= {target} s", pages[key] <= target)
            else:
                add(f"{label} ({rows_note})", why or "n/a (page not built)", f"<= {target} s", None if not why else False)

    width = [max(len(r[i]) for r in [("figure", "measured", "target", ""), *table]) for i in range(4)]
    print()
    print(f"evaldash benchmark ({'quick' if args.quick else f'{args.size_gb:g} GB'}), {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{os.cpu_count()} cores")
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(("figure", "measured", "target", "ok"), width, strict=True)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in width) + "|")
    for row in table:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, width, strict=True)) + " |")
    n_fail = sum(1 for r in table if r[3] == "FAIL")
    print(f"\n{sum(1 for r in table if r[3] == 'PASS')} passed, {n_fail} failed")
    if args.quick and n_fail:
        print("(--quick is a smoke test: the targets are set for 1 GB logs; on 20 MB ones, fixed costs such as the "
              "loader's setup or a server start weigh on the ratios. Run --size-gb 1 for issue 10's figures.)")


if __name__ == "__main__":
    main()
