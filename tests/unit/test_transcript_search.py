"""Transcript search: the recorder's byte-span grep and the generic loader scan find the same hits."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from loaders.base import Loader, make_snippet, search_records
from loaders.catalog import build_catalog, loader_for
from loaders.schema import SampleRow
from loaders.sources.recorder import RecorderLoader
from tests.conftest import EXAMPLES, FIXTURES, one_sample_log

HOSTILE = FIXTURES / "hostile" / "hostile.jsonl"
RUN = "261123090000HOSTILE1"


def _pattern(text: str, regex: bool = False) -> re.Pattern[str]:
    return re.compile(text if regex else re.escape(text), re.IGNORECASE)


def test_hits_carry_sample_where_and_decoded_snippet():
    hits = RecorderLoader(str(HOSTILE)).search_transcripts(RUN, _pattern("ONERROR"), limit=50)
    assert {h.sample_id for h in hits} == {"hostile.0", "hostile.1 ![id](http://127.0.0.1:9/id.png) :red[id] $x$"}
    hit = hits[0]
    assert hit.snippet[hit.start:hit.end].lower() == "onerror"
    assert '\\"' not in hit.snippet and '"http://127.0.0.1:9/x.png"' in hit.snippet  # decoded, not JSON-escaped
    assert "\n" not in hit.snippet
    assert hit.where.startswith("raw_sample: data.input[1].content")


def test_per_sample_cap_and_limit():
    loader = RecorderLoader(str(HOSTILE))
    hits = loader.search_transcripts(RUN, _pattern("pwned"), limit=50, per_sample=2)
    assert [h.sample_id for h in hits].count("hostile.0") == 2
    assert len(loader.search_transcripts(RUN, _pattern("pwned"), limit=3)) == 3


def test_regex_and_context_sensitive_patterns():
    loader = RecorderLoader(str(HOSTILE))
    assert loader.search_transcripts(RUN, _pattern(r"mc\^2\$", regex=True), limit=5)
    anchored = loader.search_transcripts(RUN, _pattern(r"^You are a test", regex=True), limit=5)
    assert anchored and all(h.snippet.startswith("You are a test") for h in anchored)  # ^ is the string's start
    assert loader.search_transcripts(RUN, _pattern("no such text anywhere"), limit=5) == []


def test_envelope_keys_are_not_searched():
    assert RecorderLoader(str(HOSTILE)).search_transcripts(RUN, _pattern(RUN), limit=5) == []


def test_escaped_text_is_found(tmp_path: Path):
    log = tmp_path / "esc.jsonl"
    lines = [{"spec": {"run_id": "261123000000ESCAPED1", "eval_name": "e", "completion_fns": ["m"]}},
             {"run_id": "261123000000ESCAPED1", "event_id": 0, "sample_id": "s.0", "type": "sampling",
              "data": {"prompt": "line one\nline two", "sampled": ["caf\u00e9 \"quoted\""]}}]
    log.write_text("\n".join(json.dumps(r) for r in lines) + "\n")  # json.dumps escapes é as \u00e9
    loader = RecorderLoader(str(log))
    assert loader.search_transcripts("261123000000ESCAPED1", _pattern('café "quoted"'), limit=5)[0].where == "sampling: data.sampled[0]"
    assert loader.search_transcripts("261123000000ESCAPED1", _pattern(r"one\s+line", regex=True), limit=5)


def test_fast_recorder_search_matches_the_generic_scan():
    """Every bundled recorder run: the span grep returns exactly what loading each transcript finds."""
    catalog = build_catalog([str(EXAMPLES), str(HOSTILE)])
    checked = 0
    for entry in catalog.entries.values():
        loader = loader_for(entry)
        if not isinstance(loader, RecorderLoader):
            continue
        for text in ("a", "score", "2", "<script>"):
            fast = loader.search_transcripts(entry.native_run_id, _pattern(text), limit=40)
            slow = Loader.search_transcripts(loader, entry.native_run_id, _pattern(text), limit=40)
            assert [h.model_dump() for h in fast] == [h.model_dump() for h in slow]
        checked += 1
    assert checked >= 3


def test_generic_scan_searches_every_kind_through_load_transcript():
    class Plain(Loader):
        kind = "plain"
        label = "test"

        @classmethod
        def handles(cls, source: str) -> bool:
            return False

        def list_runs(self):  # pragma: no cover - not used
            raise NotImplementedError

        def load_samples(self, run_id: str) -> list[SampleRow]:
            return [SampleRow(run_id=run_id, sample_id=f"s{i}") for i in range(5)]

        def load_transcript(self, run_id: str, sample_id: str, attempt: int = 0):
            from loaders.schema import Message, Transcript

            return Transcript(run_id=run_id, sample_id=sample_id, items=(Message(role="user", text=f"hello {sample_id}"),))

    hits = Plain("x").search_transcripts("r", _pattern("hello s3"), limit=10)
    assert [(h.sample_id, h.where) for h in hits] == [("s3", "record: items[0].text")]


def test_snippet_offsets_and_ellipses():
    text = "x" * 100 + "NEEDLE" + "y" * 100
    snippet, start, end = make_snippet(text, re.search("NEEDLE", text), context=10)
    assert snippet == "…" + "x" * 10 + "NEEDLE" + "y" * 10 + "…" and snippet[start:end] == "NEEDLE"


def test_empty_matches_are_ignored():
    assert search_records("r", "s", 0, [{"a": "abc"}], re.compile("z*"), 5) == []


@pytest.mark.parametrize("bad", ["(", "[a-", "(?P<1>x)"])
def test_bad_regex_is_a_clear_error(bad):
    from dashboard.data import search_pattern
    from loaders.patterns import PatternError, UserPattern

    with pytest.raises(PatternError, match="invalid regular expression"):
        search_pattern(bad, regex=True)
    literal = search_pattern(bad, regex=False)  # the same text, taken literally
    assert UserPattern(literal, is_regex=True).search(f"x {bad.upper()} y").group(0) == bad.upper()


def test_a_catastrophic_regex_is_stopped_with_a_clear_error():
    """(a|aa)+$ against a line of a's backtracks for hours in Python's `re`: a shared server must not hang on it."""
    from loaders.patterns import PatternTimeout, UserPattern

    pattern = UserPattern(r"(a|aa)+$", is_regex=True, budget_s=0.2)
    with pytest.raises(PatternTimeout, match="simplify it"):
        list(pattern.finditer("a" * 60 + "b"))
    with pytest.raises(PatternTimeout):  # the budget is spent: the next call stops at once
        pattern.search("aaa")


def test_a_catastrophic_regex_in_a_run_search_stops_that_search_only(tmp_path):
    from loaders.patterns import PatternTimeout, UserPattern

    log = one_sample_log(tmp_path / "slow.jsonl", "SLOW1", "slow.dev.0",
                         [("sampling", {"prompt": "hello", "sampled": ["a" * 60 + "b"]}), ("match", {"correct": True})])
    loader = RecorderLoader(log)
    with pytest.raises(PatternTimeout):
        loader.search_transcripts("SLOW1", UserPattern(r"(a|aa)+$", is_regex=True, budget_s=0.2), limit=5)
    assert loader.search_transcripts("SLOW1", UserPattern("hello", is_regex=False), limit=5)  # the next one works


def test_transcript_and_search_do_not_rescan_the_file(monkeypatch):
    """After the first scan, a transcript or a search reads only the run's byte spans (issue 7, Speed)."""
    from loaders.formats import evals_log

    loader = RecorderLoader(str(HOSTILE))
    loader.list_runs()

    def no_rescan(*_args, **_kwargs):
        raise AssertionError("the file was scanned again")

    for name in ("scan", "scan_file"):
        if hasattr(evals_log, name):
            monkeypatch.setattr(evals_log, name, no_rescan)
    assert loader.load_transcript(RUN, "hostile.0", 0).messages
    assert loader.search_transcripts(RUN, _pattern("pwned"), limit=5)
