"""The Transcript page: every bundled run replays, navigation keeps deep links, search finds samples."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.components.transcript import is_failure, neighbours
from loaders.catalog import build_catalog, loader_for
from loaders.errors import SourceError
from loaders.schema import SampleRow
from tests.conftest import EXAMPLES, FIXTURES, long_conversation, one_sample_log

HOSTILE = FIXTURES / "hostile" / "hostile.jsonl"
HOSTILE_RUN = "261123090000HOSTILE1"
HOSTILE_ID = "hostile.1 ![id](http://127.0.0.1:9/id.png) :red[id] $x$"


def _open(make_app, *sources: str, **query: str) -> AppTest:
    at = make_app(*sources, **query)
    at.run()
    at.switch_page("views/transcript.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _links(at: AppTest) -> dict[str, dict[str, list[str]]]:
    return {link.proto.label: parse_qs(link.proto.query_string) for link in at.page_link}


def _bundled() -> list[tuple[str, str, str, SampleRow]]:
    """(run id, kind, dialect, first row) of every example run that has rows, whatever kinds the catalog holds."""
    out = []
    for entry in build_catalog([str(EXAMPLES)]).entries.values():
        try:
            rows = loader_for(entry).load_samples(entry.native_run_id)
        except SourceError:
            continue  # a run whose rows cannot load has no transcript to open (the Runs page reports it)
        if rows:
            out.append((entry.run_id, entry.run.source_kind, entry.run.dialect or "", rows[0]))
    return out


BUNDLED = _bundled()


def test_catalog_has_runs_of_several_dialects():
    assert len({dialect for _r, _k, dialect, _row in BUNDLED}) >= 2


@pytest.mark.parametrize(("run_id", "kind", "dialect", "row"), BUNDLED, ids=[f"{k}-{d}-{r}" for r, k, d, _ in BUNDLED])
def test_every_bundled_run_replays(make_app, run_id, kind, dialect, row):
    at = _open(make_app, str(EXAMPLES), run=run_id, sample=row.sample_id, attempt=str(row.attempt))
    assert not at.error, [e.value for e in at.error]
    assert [m.label for m in at.metric] == ["Score", "Correct", "Finish", "Limits hit"]
    texts = [t.value for t in at.text]
    assert any(t.startswith(f"sample {row.sample_id} · attempt {row.attempt}") for t in texts)
    assert at.get("download_button")
    assert all(m.name for m in at.chat_message)


def test_hostile_transcript_renders_as_text(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, sample="hostile.0", attempt="0")
    assert [m.name for m in at.chat_message] == ["system", "user", "assistant"]
    user = at.chat_message[1]
    assert any("<script>window.__pwned=1</script>" in t.value for t in user.text)
    assert not user.markdown  # nothing from the transcript goes to st.markdown unless opted in
    assert all("<script>" not in m.value for m in at.markdown)
    # opt in on the user's message: sanitised Markdown
    user.toggle[0].set_value(True).run()
    rendered = at.chat_message[1].markdown[0].value
    assert "&lt;script>" in rendered and "\\$E=mc^2\\$" in rendered and "javascript: link removed" in rendered
    assert "![" not in rendered


def test_model_call_and_grade_shown(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, sample="hostile.0", attempt="0")
    texts = [t.value for t in at.text]
    assert "LM call · hostile-model-0001 · 40 in / 30 out tokens" in texts
    assert {m.label: m.value for m in at.metric}["Correct"] == "no"
    assert any(e.label.startswith("Raw records (3)") for e in at.expander)


def test_prev_next_and_next_failure_links(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, sample="hostile.0", attempt="0")
    links = _links(at)
    assert links["Next"] == {"run": [HOSTILE_RUN], "sample": [HOSTILE_ID], "attempt": ["0"]}
    assert [link.proto.disabled for link in at.page_link if link.proto.label == "Previous"] == [True]
    at2 = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, sample=HOSTILE_ID, attempt="0")
    links = _links(at2)
    assert links["Previous"]["sample"] == ["hostile.0"]
    assert links["Next failure"]["sample"] == ["hostile.0"]  # wraps round to the failed sample
    assert at2.query_params["run"] == HOSTILE_RUN  # the page writes its deep link back


def test_links_keep_the_search(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, sample="hostile.0", attempt="0", q="pwned")
    assert _links(at)["Next"]["q"] == ["pwned"]


def test_search_lists_matching_samples_with_snippets(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, q="ONERROR")
    assert "6 matches in 2 samples" in [t.value for t in at.text]
    results = [link for link in at.page_link if parse_qs(link.proto.query_string).get("q") == ["ONERROR"]]
    samples = [parse_qs(link.proto.query_string)["sample"][0] for link in results if "sample" in parse_qs(link.proto.query_string)]
    assert HOSTILE_ID in samples and "hostile.0" in samples
    hostile_label = next(link.proto.label for link in results if parse_qs(link.proto.query_string)["sample"] == [HOSTILE_ID])
    assert "\\!\\[id\\]" in hostile_label  # a label is Markdown: the id is escaped
    assert any("«onerror»" in c.value for c in at.code)
    assert not at.chat_message  # a search without a sample shows results, not a transcript


def test_search_submitted_from_the_form(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, sample="hostile.0", attempt="0")
    at.text_input[0].set_value("mc^2")
    form_button = next(b for b in at.button if b.label == "Search")
    form_button.click().run()
    assert at.query_params["q"] == "mc^2"
    assert at.query_params["sample"] == "hostile.0"
    assert any("«mc^2»" in c.value for c in at.code)


def test_bad_regex_is_a_message_not_a_crash(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, q="([a-", regex="1")
    assert at.error[0].value == "Not a valid regular expression."


def test_a_catastrophic_regex_search_is_stopped_with_a_message(make_app, monkeypatch, tmp_path):
    log = one_sample_log(tmp_path / "slow.jsonl", "261124000000SLOWREGEX", "slow.dev.0",
                         [("sampling", {"prompt": "hello", "sampled": ["a" * 60 + "b"]})])
    monkeypatch.setenv("EVALDASH_REGEX_SECONDS", "0.2")
    at = _open(make_app, log, run="261124000000SLOWREGEX", q="(a|aa)+$", regex="1")
    assert at.error[0].value == "The search took too long and was stopped."
    assert any("simplify it" in c.value for c in at.code)


def test_unknown_run_and_sample(make_app):
    at = _open(make_app, str(HOSTILE), run="NO-SUCH-RUN")
    assert at.error[0].value == "No run with this id in the configured sources."
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, sample="nope", attempt="3")
    assert at.error[0].value == "This run has no such sample / attempt."


def test_no_sample_opens_the_first(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN)
    assert any(t.value.startswith("sample hostile.0 · attempt 0") for t in at.text)


def _row(sample_id: str, **kw) -> SampleRow:
    return SampleRow(run_id="r", sample_id=sample_id, **kw)


def test_neighbours_and_failure_rule():
    rows = [_row("a", correct=False), _row("b", correct=True), _row("c", score=0.5), _row("d", error="boom")]
    assert [is_failure(r) for r in rows] == [True, False, True, True]
    near = neighbours(rows, "b", 0)
    assert (near.position, near.previous.sample_id, near.next.sample_id, near.next_failure.sample_id) == (1, "a", "c", "c")
    last = neighbours(rows, "d", 0)
    assert last.next is None and last.next_failure.sample_id == "a"
    assert neighbours(rows, "zz", 0).position == -1


def _long_log(tmp_path, n_messages: int) -> str:
    return one_sample_log(tmp_path / "long.jsonl", "261124000000LONGCONVO", "long.dev.0", long_conversation(n_messages))


def _texts(at: AppTest) -> set[str]:
    return {t.value for t in at.text}


def test_a_long_transcript_is_shown_a_hundred_items_at_a_time(make_app, tmp_path):
    log = _long_log(tmp_path, 250)
    at = _open(make_app, log, run="261124000000LONGCONVO", sample="long.dev.0", attempt="0")
    assert "msg-000" in _texts(at) and "msg-099" in _texts(at) and "msg-100" not in _texts(at)
    caption = next(c.value for c in at.caption if " · part " in c.value)
    assert caption.startswith("Items 1–100 of ") and caption.endswith("part 1 of 3")
    links = {link.proto.label: link.proto for link in at.page_link}
    assert links["Earlier items"].disabled and not links["Later items"].disabled
    assert parse_qs(links["Later items"].query_string)["part"] == ["2"]
    assert parse_qs(links["Later items"].query_string)["sample"] == ["long.dev.0"]  # a deep link to the same sample

    at = _open(make_app, log, run="261124000000LONGCONVO", sample="long.dev.0", attempt="0", part="2")
    assert "msg-100" in _texts(at) and "msg-199" in _texts(at)
    assert not {"msg-000", "msg-200"} & _texts(at)


def test_a_part_past_the_end_shows_the_last_part(make_app, tmp_path):
    at = _open(make_app, _long_log(tmp_path, 250), run="261124000000LONGCONVO", sample="long.dev.0", attempt="0",
               part="99")
    assert next(c.value for c in at.caption if " · part " in c.value).endswith("part 3 of 3")
    assert "the end" in _texts(at) and "msg-249" in _texts(at)


def test_a_short_transcript_has_no_parts(make_app):
    at = _open(make_app, str(HOSTILE), run=HOSTILE_RUN, sample="hostile.0", attempt="0")
    assert not [c for c in at.caption if " · part " in c.value]
    assert "Later items" not in {link.proto.label for link in at.page_link}
