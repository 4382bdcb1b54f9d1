"""The `evaldash` CLI: its --json shapes are a promise to scripts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from loaders.cli import main
from tests.conftest import EXAMPLES, FIXTURES, ROOT

SUMMARY_KEYS = {"run_id", "source_kind", "eval_name", "model", "n_samples", "n_attempts", "score_mean", "n_errors",
                "tokens_total", "cost_usd_total", "warnings"}


def run_json(capsys, *args: str) -> dict:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_summary_json_reproduces_each_final_report(capsys):
    out = run_json(capsys, "summary", str(FIXTURES / "evals"), "--json")
    runs = {r["run_id"]: r for r in out["runs"]}
    assert len(runs) == 7
    for run in runs.values():
        assert run.keys() >= SUMMARY_KEYS
    for run_id in ("261120100000AAAAAAAA", "230301120000OLDSPEC1", "261120110000MIDREPRT", "261120130000BADLINES"):
        assert runs[run_id]["score_mean"] == pytest.approx(runs[run_id]["reported"]["value"])
    assert runs["261120100000AAAAAAAA"]["tokens_total"] == 88
    assert runs["230301120000OLDSPEC1"]["tokens_total"] is None


def test_summary_json_on_the_bundled_evals_examples(capsys):
    out = run_json(capsys, "summary", str(EXAMPLES / "recorder" / "evals_oaieval-dummy_test-match.jsonl"), "--json")
    (run,) = out["runs"]
    assert (run["n_samples"], run["score_mean"], run["reported"]["value"]) == (3, 0.0, 0.0)


def test_warnings_go_to_stderr_with_file_and_line(capsys):
    assert main(["summary", str(FIXTURES / "evals" / "bad_lines.jsonl")]) == 0
    captured = capsys.readouterr()
    assert "bad_lines.jsonl:4: line 4 skipped: not JSON" in captured.err
    assert "2 lines skipped" in captured.err
    assert "261120130000BADLINES" in captured.out


def test_unreadable_input_exits_1_with_one_line_naming_the_file(capsys):
    assert main(["summary", str(FIXTURES / "mixed_folder" / "notes.txt")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "notes.txt" in err[0] and err[0].startswith("evaldash: error:")


def test_samples_json(capsys):
    out = run_json(capsys, "samples", str(FIXTURES / "evals" / "report_on_line2.jsonl"), "--run", "261120100000AAAAAAAA",
                   "--json")
    assert [(r["sample_id"], r["attempt"], r["score"], r["correct"], r["error"]) for r in out["rows"]] == [
        ("arith.dev.1", 0, 0.0, False, None), ("arith.dev.2", 0, 1.0, True, None),
        ("arith.dev.9", 0, 0.0, False, None), ("arith.dev.10", 0, 1.0, True, None)]


def test_samples_unknown_run(capsys):
    assert main(["samples", str(FIXTURES / "evals" / "report_on_line2.jsonl"), "--run", "nope"]) == 1
    assert "no run 'nope'" in capsys.readouterr().err


def test_console_script_entry_point():
    proc = subprocess.run([sys.executable, "-m", "loaders.cli", "summary", str(FIXTURES / "evals" / "report_on_line2.jsonl")],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0].startswith("run_id")
