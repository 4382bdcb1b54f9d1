"""Conversation replay: one transcript drawn as chat, every untrusted string inert.

Text written by models, tools and graders goes through `st.text`, `st.code` or `st.json`
only; widget labels built from it go through `label_text` (labels are Markdown). The
opt-in "Render Markdown" toggle passes a message through `sanitize_markdown` first.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from dashboard import state
from dashboard.components import safe
from dashboard.components.markdown_safe import label_text, sanitize_markdown
from loaders.schema import (
    EnvironmentEvent,
    GenericEvent,
    Grade,
    GradeCheckpoint,
    Message,
    ModelCall,
    SampleRow,
    SearchHit,
    Transcript,
)

PAGE = "views/transcript.py"
ITEMS_PER_PART = 100  # items of a long transcript shown at once (a message is ~4 elements on the page)
HEAD_LINES = 12  # a message longer than this (or HEAD_CHARS) shows its head and an expander for the rest
HEAD_CHARS = 2000
AVATARS = {
    "user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "model": "assistant",
    "system": ":material/settings:", "developer": ":material/code:", "tool": ":material/build:",
    "function": ":material/build:", "ipython": ":material/terminal:", "environment": ":material/public:",
    "observation": ":material/visibility:", "critic": ":material/rate_review:", "grader": ":material/grading:",
}
OTHER_AVATAR = ":material/chat_bubble:"
CONVERSATION_ROLES = {"user", "human", "assistant", "ai", "system", "developer"}  # never a tool's result


# --- pure helpers (tested without a running app) ---------------------------------------------------------------


def is_failure(row: SampleRow) -> bool:
    """What "next failure" stops at: an error, `correct` false, or (no verdict) a score below 1."""
    if row.error is not None or row.correct is False:
        return True
    return row.correct is None and row.score is not None and row.score < 1


@dataclass(frozen=True)
class Neighbours:
    position: int  # index of the current row in `rows`, -1 when not found
    previous: SampleRow | None
    next: SampleRow | None
    next_failure: SampleRow | None  # the first failure after this row, wrapping round to the start


def neighbours(rows: Sequence[SampleRow], sample_id: str, attempt: int) -> Neighbours:
    position = next((i for i, r in enumerate(rows) if r.sample_id == sample_id and r.attempt == attempt), -1)
    if position < 0:
        return Neighbours(-1, None, None, next((r for r in rows if is_failure(r)), None))
    after = list(rows[position + 1:]) + list(rows[:position])
    return Neighbours(
        position,
        rows[position - 1] if position > 0 else None,
        rows[position + 1] if position + 1 < len(rows) else None,
        next((r for r in after if is_failure(r)), None),
    )


def link_params(run_id: str, row: SampleRow, keep: dict[str, str] | None = None) -> dict[str, str]:
    """The deep link of one transcript (`?run=&sample=&attempt=`), plus params to carry (the search)."""
    return {state.RUN: run_id, state.SAMPLE: row.sample_id, state.ATTEMPT: str(row.attempt), **(keep or {})}


def row_label(row: SampleRow) -> str:
    if row.error:
        verdict = "error"
    elif row.correct is not None:
        verdict = "✓" if row.correct else "✗"
    else:
        verdict = "" if row.score is None else f"score {row.score:.3g}"
    return " · ".join(p for p in (row.sample_id, f"attempt {row.attempt}" if row.attempt else "", verdict) if p)


def marked(hit: SearchHit) -> str:
    """The snippet with its match between « » (plain text: shown with st.code)."""
    s = hit.snippet
    return f"{s[:hit.start]}«{s[hit.start:hit.end]}»{s[hit.end:]}"


def tool_results(items: Sequence[Any]) -> dict[int, list[Message]]:
    """Tool results keyed by `id()` of the call they answer.

    By `tool_call_id` when the source has ids; otherwise (nanoeval/harmony: the call is the
    assistant's `recipient`, the result's author `name`) the next result named like an
    unanswered call of the latest assistant turn.
    """
    by_id = {c.id: c for i in items if isinstance(i, Message) for c in i.tool_calls if c.id}
    out: dict[int, list[Message]] = {}
    pending: list[Any] = []
    for item in items:
        if not isinstance(item, Message):
            continue
        if item.tool_calls:
            pending = [c for c in item.tool_calls if not c.id]
        elif item.tool_call_id is not None and item.tool_call_id in by_id:
            out.setdefault(id(by_id[item.tool_call_id]), []).append(item)
        elif (item.tool_call_id is None and pending and item.name in (pending[0].name, None)
              and item.role not in CONVERSATION_ROLES):
            out.setdefault(id(pending.pop(0)), []).append(item)
        else:
            pending = []
    return out


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def file_stem(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts)).strip("_")[:120] or "transcript"


# --- rendering --------------------------------------------------------------------------------------------------


def long_text(text: str, *, collapsible: bool = True) -> None:
    """Plain text; past a few lines the rest goes into an expander (not inside another expander)."""
    if not text:
        return
    lines = text.splitlines()
    if not collapsible or (len(lines) <= HEAD_LINES and len(text) <= HEAD_CHARS):
        st.text(text)
        return
    head = "\n".join(lines[:HEAD_LINES])[:HEAD_CHARS]
    st.text(head)
    rest = text[len(head):].lstrip("\n")
    more = max(len(lines) - HEAD_LINES, 1)
    with st.expander(f"Show the rest ({more} more line{'s' if more != 1 else ''}, {len(rest):,} characters)"):
        st.text(rest)


def _value(value: Any, *, expanded: bool | int = 2) -> None:
    """Structured values as a JSON tree, anything else as plain code (st.json would parse a string)."""
    if isinstance(value, dict | list):
        st.json(value, expanded=expanded)
    elif value is not None:
        st.code(value if isinstance(value, str) else pretty_json(value), language=None, wrap_lines=True)


def _fmt(value: float | int | None, spec: str = "", unit: str = "") -> str | None:
    return None if value is None else f"{value:{spec}}{unit}"


def _message(msg: Message, index: int, key: str, results: dict[int, list[Message]]) -> None:
    role = msg.role or "unknown"
    with st.chat_message(role[:40], avatar=AVATARS.get(role.lower(), OTHER_AVATAR)):
        header = [role]
        header += [f"name: {msg.name}"] if msg.name else []
        header += [f"to: {msg.recipient}"] if msg.recipient and msg.recipient != "all" else []
        header += [f"channel: {msg.channel}"] if msg.channel else []
        header += [f"answers call {msg.tool_call_id}"] if msg.tool_call_id else []
        header += [msg.timestamp.strftime("%Y-%m-%d %H:%M:%S")] if msg.timestamp else []
        st.text(" · ".join(header))
        if msg.reasoning:
            with st.expander("Reasoning", icon=":material/psychology:"):
                st.text(msg.reasoning)
        # harmony-style calls (nanoeval): the text *is* the call's arguments, shown once, under the call
        text_is_call = any(c.name == msg.recipient and c.arguments_raw == msg.text for c in msg.tool_calls)
        if msg.text and not text_is_call:
            if st.toggle("Render Markdown", key=f"{key}.md.{index}", help="Formatting only: no HTML, math, images or links"):
                st.markdown(sanitize_markdown(msg.text))
            else:
                long_text(msg.text)
        for part in msg.parts:
            st.text(f"[{part.type}]")
            if part.text:
                long_text(part.text)
            else:
                _value(part.data, expanded=1)
        for call in msg.tool_calls:
            with st.container(border=True):
                st.text(f"Tool call: {call.name}" + (f"  (id {call.id})" if call.id else ""))
                if isinstance(call.arguments, str) or call.arguments is None:
                    st.code(call.arguments_raw or call.arguments or "(no arguments)", language=None, wrap_lines=True)
                else:
                    st.code(pretty_json(call.arguments), language="json", wrap_lines=True)
                for result in results.get(id(call), []):
                    st.text("Result" + (f" from {result.name}" if result.name else ""))
                    long_text(result.text)
                    for part in result.parts:
                        st.text(f"[{part.type}]")
                        _value(part.text if part.text else part.data, expanded=1)
        if not (msg.text or msg.parts or msg.tool_calls or msg.reasoning):
            st.text("(empty message)")
        if msg.metadata:
            with st.expander("Metadata", icon=":material/info:"):
                _value(msg.metadata, expanded=1)


def _model_call(call: ModelCall) -> None:
    tokens = None
    if call.tokens_in is not None or call.tokens_out is not None:
        known = ["?" if n is None else f"{n:,}" for n in (call.tokens_in, call.tokens_out)]
        tokens = f"{known[0]} in / {known[1]} out tokens"
    parts = ["LM call", call.model or "model unknown", tokens, _fmt(call.cost_usd, ".4f", " USD"),
             _fmt(None if call.latency_ms is None else call.latency_ms / 1000, ".2f", " s"),
             f"finish: {call.finish_reason}" if call.finish_reason else None]
    with st.container(border=True):
        st.text(" · ".join(p for p in parts if p))


def _environment(event: EnvironmentEvent, index: int) -> None:
    parts = ["Environment" + (f" ({event.system})" if event.system else ""), _fmt(event.reward, ".4g"),
             "terminated" if event.terminated else None, "truncated" if event.truncated else None]
    if parts[1] is not None:
        parts[1] = f"reward {parts[1]}"
    with st.container(border=True):
        st.text(" · ".join(p for p in parts if p))
        if event.state_before is not None or event.state_after is not None:
            with st.expander("State before / after"):
                before, after = st.columns(2)
                with before:
                    st.text("Before")
                    _value(event.state_before, expanded=1)
                with after:
                    st.text("After")
                    _value(event.state_after, expanded=1)


def _checkpoint(cp: GradeCheckpoint) -> None:
    verdict = {True: "correct", False: "not correct"}.get(cp.correct) if cp.correct is not None else None
    parts = ["Grade checkpoint", _fmt(cp.score, ".4g"), verdict, _fmt(cp.elapsed_s, ".1f", " s elapsed")]
    if parts[1] is not None:
        parts[1] = f"score {parts[1]}"
    with st.container(border=True):
        st.text(" · ".join(p for p in parts if p))
        if cp.grader_log:
            long_text(cp.grader_log)


def _event(event: GenericEvent) -> None:
    when = f" · {event.timestamp:%H:%M:%S}" if event.timestamp else ""
    with st.expander(f"Event: {label_text(event.type, 60)}{when}", icon=":material/data_object:",
                     expanded=event.type == "error"):
        _value(event.data)


def part_bounds(n_items: int, part: int) -> tuple[int, int, int, int]:
    """(part, first index, end index, number of parts) of a transcript shown ITEMS_PER_PART items at a time;
    an out-of-range part (an old link to a shorter transcript) shows the nearest one."""
    n_parts = max(1, -(-n_items // ITEMS_PER_PART))
    part = min(max(part, 1), n_parts)
    start = (part - 1) * ITEMS_PER_PART
    return part, start, min(start + ITEMS_PER_PART, n_items), n_parts


def parts_nav(run_id: str, row: SampleRow, keep: dict[str, str], n_items: int, part: int) -> None:
    """Where this part sits in a long transcript, with links to the parts either side (deep links: `&part=N`)."""
    part, start, end, n_parts = part_bounds(n_items, part)
    if n_parts == 1:
        return
    cols = st.columns([1, 1, 4])
    for col, (label, icon, target) in zip(cols, [("Earlier items", ":material/arrow_upward:", part - 1),
                                                 ("Later items", ":material/arrow_downward:", part + 1)], strict=False):
        with col:
            params = {**link_params(run_id, row, keep), state.PART: str(min(max(target, 1), n_parts))}
            st.page_link(PAGE, label=label, icon=icon, query_params=params, disabled=not 1 <= target <= n_parts)
    cols[2].caption(f"Items {start + 1:,}–{end:,} of {n_items:,} · part {part} of {n_parts}")


@st.fragment
def replay(transcript: Transcript, part: int = 1) -> None:
    """The items of one part, each where it happened; a fragment, so a Markdown toggle reruns only this part.

    Long agent transcripts are shown ITEMS_PER_PART items at a time: thousands of chat elements at once would
    take seconds to send and draw. A tool result shows under its call, whichever part the result is in.
    """
    key = "transcript." + hashlib.sha1(
        f"{transcript.run_id}\0{transcript.sample_id}\0{transcript.attempt}".encode()).hexdigest()[:10]
    results = tool_results(transcript.items)
    attached = {id(m) for group in results.values() for m in group}
    if not transcript.items:
        st.info("This transcript has no messages or events.")
    _part, start, end, _n = part_bounds(len(transcript.items), part)
    for index, item in enumerate(transcript.items[start:end], start=start):
        if isinstance(item, Message):
            if id(item) not in attached:
                _message(item, index, key, results)
        elif isinstance(item, ModelCall):
            _model_call(item)
        elif isinstance(item, EnvironmentEvent):
            _environment(item, index)
        elif isinstance(item, GradeCheckpoint):
            _checkpoint(item)
        elif isinstance(item, GenericEvent):
            _event(item)


def grade(g: Grade) -> None:
    st.subheader("Grade", anchor=False)
    cols = st.columns(4)
    cols[0].metric("Score", "—" if g.score is None else f"{g.score:.4g}")
    cols[1].metric("Correct", {True: "yes", False: "no"}.get(g.correct, "—") if g.correct is not None else "—")
    cols[2].metric("Finish", g.finish_reason or "—")
    limits = [name.removesuffix("_reached").replace("_", " ") for name in
              ("max_steps_reached", "max_time_reached", "max_tokens_reached") if getattr(g, name)]
    cols[3].metric("Limits hit", ", ".join(limits) or "none")
    flags = {k: getattr(g, k) for k in ("max_steps_reached", "max_time_reached", "max_tokens_reached") if getattr(g, k) is not None}
    if flags:
        st.text("Finish flags: " + ", ".join(f"{k}={v}" for k, v in flags.items()))
    if g.error:
        st.text("Error")
        st.code(g.error, language=None, wrap_lines=True)
    if g.grader_log:
        st.text("Grader log")
        st.code(g.grader_log, language=None, wrap_lines=True)


def row_summary(row: SampleRow) -> None:
    parts = [f"sample {row.sample_id}", f"attempt {row.attempt}",
             _fmt(row.tokens_total, ",", " tokens"), _fmt(row.cost_usd, ".4f", " USD"),
             _fmt(None if row.latency_ms is None else row.latency_ms / 1000, ".2f", " s"),
             f"{row.n_messages} messages" if row.n_messages else None]
    st.text(" · ".join(p for p in parts if p))


def raw_and_download(transcript: Transcript) -> None:
    if transcript.warnings:
        with st.expander(f"Load warnings ({len(transcript.warnings)})", icon=":material/warning:"):
            safe.warnings_list(transcript.warnings)
    with st.expander(f"Raw records ({len(transcript.raw)})", icon=":material/data_object:"):
        if transcript.raw:
            st.json(list(transcript.raw), expanded=1)
        else:
            st.text("This source keeps no raw records for the transcript.")
    st.download_button(
        "Download transcript (JSON)", data=lambda: transcript.model_dump_json(indent=2),
        file_name=file_stem(transcript.run_id, transcript.sample_id, str(transcript.attempt)) + ".json",
        mime="application/json", on_click="ignore", icon=":material/download:", key="transcript.download",
    )


def nav(rows: Sequence[SampleRow], run_id: str, row: SampleRow, keep: dict[str, str]) -> None:
    """Previous / next sample and next failure, as links: the URL stays a deep link."""
    near = neighbours(rows, row.sample_id, row.attempt)
    cols = st.columns([1, 1, 1, 3])
    links = [("Previous", ":material/arrow_back:", near.previous), ("Next", ":material/arrow_forward:", near.next),
             ("Next failure", ":material/error:", near.next_failure)]
    for col, (label, icon, target) in zip(cols, links, strict=False):
        with col:
            if target is None:
                st.page_link(PAGE, label=label, icon=icon, disabled=True, query_params=link_params(run_id, row, keep))
            else:
                st.page_link(PAGE, label=label, icon=icon, query_params=link_params(run_id, target, keep),
                             help=label_text(row_label(target), 120))
    cols[3].text(f"{near.position + 1} of {len(rows)}")


def sample_picker(rows: Sequence[SampleRow], current: SampleRow | None, run_id: str) -> SampleRow | None:
    """Jump to any sample; returns the chosen row when it differs from the one shown."""
    index = next((i for i, r in enumerate(rows) if current is not None and r is current), None)
    where = f"{run_id}\0{current and current.sample_id}\0{current and current.attempt}"
    key = "transcript.pick." + hashlib.sha1(where.encode()).hexdigest()[:10]
    choice = st.selectbox("Sample", range(len(rows)), index=index, format_func=lambda i: row_label(rows[i]), key=key,
                          placeholder="Pick a sample")
    return None if choice is None or (current is not None and rows[choice] is current) else rows[choice]


def search_form(query: str | None, regex: bool) -> tuple[str, bool] | None:
    """The search box; returns (text, regex) when submitted."""
    key = hashlib.sha1(f"{query}\0{regex}".encode()).hexdigest()[:10]
    with st.form("transcript.search", border=False):
        cols = st.columns([4, 1, 1], vertical_alignment="bottom")
        text = cols[0].text_input("Search every transcript of this run (case-insensitive)", value=query or "",
                                  key=f"transcript.q.{key}", placeholder="text, or a regular expression")
        is_regex = cols[1].checkbox("Regex", value=regex, key=f"transcript.regex.{key}")
        submitted = cols[2].form_submit_button("Search", icon=":material/search:")
    return (text.strip(), is_regex) if submitted else None


def search_results(hits: Sequence[SearchHit], limit: int, keep: dict[str, str]) -> None:
    """Matching samples, each a link to its transcript, with a snippet around every hit."""
    if not hits:
        st.info("No matches in this run's transcripts.")
        return
    groups: dict[tuple[str, str, int], list[SearchHit]] = {}
    for hit in hits:
        groups.setdefault((hit.run_id, hit.sample_id, hit.attempt), []).append(hit)
    more = " (stopped at the limit; refine the search)" if len(hits) >= limit else ""
    st.text(f"{len(hits)} match{'es' if len(hits) != 1 else ''} in {len(groups)} sample{'s' if len(groups) != 1 else ''}{more}")
    for (run_id, sample_id, attempt), group in groups.items():
        params = {state.RUN: run_id, state.SAMPLE: sample_id, state.ATTEMPT: str(attempt), **keep}
        st.page_link(PAGE, label=label_text(f"{sample_id} · attempt {attempt}", 100), icon=":material/chat:",
                     query_params=params)
        st.code("\n".join(f"{h.where}: {marked(h)}" for h in group), language=None, wrap_lines=True)
