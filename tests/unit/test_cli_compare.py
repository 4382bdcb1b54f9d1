"""`evaldash compare` as a CI gate, on small openai-evals recorder logs.

Fixtures (tests/fixtures/compare/): base 10/20 correct; regressed 2/19 shared correct (8 A-pass/B-fail,
one sample only in each run); improved 20/20 (10 A-fail/B-pass).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats as sps

from loaders.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compare"
BASE, REGRESSED, IMPROVED = "240101090000BASEAAAA", "240102090000REGRESSB", "240103090000IMPROVEC"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_regressed_pair_fails_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, str(FIXTURES), "--runs", f"{BASE},{REGRESSED}", "--json", "--fail-on-regression")
    assert code == 1
    data = json.loads(out)
    assert data["n_both"] == 19 and data["only_a"] == ["arith.dev.19"] and data["only_b"] == ["arith.dev.20"]
    assert (data["improved"], data["regressed"], data["unchanged"]) == (0, 8, 11)
    assert data["p_value"] == pytest.approx(sps.binomtest(8, 8, 0.5).pvalue)
    assert data["test"].startswith("exact McNemar") and data["regression"] is True
    assert data["delta"] == pytest.approx(2 / 19 - 10 / 19)
    assert data["usage"]["tokens_total"]["delta"] == 8.0


def test_regression_without_the_flag_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, str(FIXTURES), "--runs", f"{BASE},{REGRESSED}")
    assert code == 0
    assert "REGRESSION" in out and "only in A: 1 (arith.dev.19)" in out and "exact McNemar" in out


def test_improved_pair_passes_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, str(FIXTURES / "base.jsonl"), str(FIXTURES / "improved.jsonl"),
                           "--runs", f"{BASE},{IMPROVED}", "--fail-on-regression")
    assert code == 0
    assert "improvement: B is significantly better than A" in out
    assert "improved 10, regressed 0, unchanged 10" in out
    code, out, _ = run_cli(capsys, str(FIXTURES), "--runs", f"{BASE},{IMPROVED}", "--json", "--fail-on-regression")
    data = json.loads(out)
    assert code == 0 and data["improvement"] and not data["regression"] and data["delta"] == pytest.approx(0.5)


def test_alpha_controls_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, str(FIXTURES), "--runs", f"{BASE},{REGRESSED}", "--alpha", "0.001",
                           "--fail-on-regression", "--json")
    assert code == 0 and json.loads(out)["alpha"] == 0.001


def test_three_runs_compare_each_against_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, str(FIXTURES), "--runs", f"{BASE},{REGRESSED},{IMPROVED}", "--json",
                           "--fail-on-regression")
    data = json.loads(out)
    assert code == 1 and data["baseline"] == BASE
    assert [c["run_b"]["run_id"] for c in data["comparisons"]] == [REGRESSED, IMPROVED]


def test_numeric_id_map_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, str(FIXTURES), "--runs", f"{BASE},{IMPROVED}", "--id-map", "numeric", "--json")
    assert code == 0 and json.loads(out)["id_map"] == "numeric" and json.loads(out)["n_both"] == 20


def test_unknown_run_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, str(FIXTURES), "--runs", f"{BASE},nope")
    assert code == 1 and "no run 'nope'" in err
    code, _, err = run_cli(capsys, str(FIXTURES), "--runs", BASE)
    assert code == 1 and "at least two" in err
