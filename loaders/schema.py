"""The one schema every source is loaded into.

Split by cost, as Inspect's log reader does: a `Run` header is cheap, `SampleRow`s
come next (one per sample x attempt), and a `Transcript` is read for one sample at a
time, on demand. A summary page must never need every transcript.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

RunStatus = Literal["completed", "running", "pending", "failed", "cancelled", "incomplete", "unknown"]
FinishReason = Literal["model_ended", "max_steps", "max_time", "max_tokens", "error", "unknown"]
Attribution = Literal["ids", "log_at_end", "inferred", "aggregate_only", "seed"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class LoadWarning(_Frozen):
    """Something a source did not say cleanly; shown on the page and printed by the CLI."""

    code: str  # machine-readable: "skipped_line", "no_final_report", "no_sample_ids", ...
    message: str
    file: str | None = None
    line: int | None = None

    def where(self) -> str:
        if self.file and self.line is not None:
            return f"{self.file}:{self.line}"
        return self.file or ""


class Run(_Frozen):
    """Header of one eval execution: cheap to list, never holds per-sample data."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    source: str  # the configured source (path or URL) this run came from
    source_kind: str  # registry kind: "recorder", "synth", "backend", ...
    location: str  # the file, folder or URL inside the source
    display_name: str
    eval_name: str | None = None
    model: str | None = None
    created_at: datetime | None = None
    status: RunStatus = "unknown"
    dialect: str | None = None  # e.g. "openai-evals", "nanoeval", "synth-compact"
    config: dict[str, Any] = Field(default_factory=dict)
    reported_metrics: dict[str, Any] = Field(default_factory=dict)  # upstream's own report, whole
    report_label: str | None = None  # "final_report", "partial final_report", "backend summary", ...
    attribution: Attribution = "ids"
    has_sample_ids: bool = True
    aggregates: dict[str, Any] = Field(default_factory=dict)  # counts shown when rows cannot be attributed
    progress_completed: int | None = None
    progress_total: int | None = None
    started_at: datetime | None = None  # live sources (backend jobs): when execution began / ended
    completed_at: datetime | None = None
    status_detail: str | None = None  # the source's own status word when not understood, or its error text
    warnings: tuple[LoadWarning, ...] = ()


class SampleRow(_Frozen):
    """One sample x attempt: everything a table or a statistic needs, no transcript."""

    run_id: str
    sample_id: str
    attempt: int = 0
    sort_key: tuple[int, str] = (0, "")  # numeric-aware order (dev.84 before dev.100)
    score: float | None = None
    correct: bool | None = None
    correct_rule: str | None = None  # how `correct` was derived, in the source's own terms
    reward_mean: float | None = None
    outcome_score: float | None = None
    events_score: float | None = None
    verifier_score: float | None = None
    latency_ms: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_total: int | None = None
    tokens_computed: bool = False  # True when evaldash summed tokens itself
    cost_usd: float | None = None
    error: str | None = None
    error_kind: str | None = None  # "system_error", "exception", exception class, ...
    finish_reason: FinishReason | None = None
    n_messages: int | None = None
    grader_log: str | None = None
    attribution: Attribution = "ids"
    has_transcript: bool = False
    flags: tuple[str, ...] = ()  # e.g. "several_matches", "possibly_misreported"
    metrics: dict[str, Any] = Field(default_factory=dict)

    @property
    def is_system_error(self) -> bool:
        """Failed for reasons outside the model (infra, harness): nanoeval leaves these out of accuracy."""
        return self.error is not None and (self.error_kind == "system_error" or self.score is None)


class ToolCall(_Frozen):
    id: str | None = None
    name: str
    arguments: Any = None  # parsed when the source gave JSON text
    arguments_raw: str | None = None


class ContentPart(_Frozen):
    """A non-text part (image, file, unknown object): shown as a JSON preview, never fetched."""

    type: str
    text: str | None = None
    data: Any = None


class Message(_Frozen):
    kind: Literal["message"] = "message"
    role: str
    text: str = ""
    parts: tuple[ContentPart, ...] = ()
    name: str | None = None
    recipient: str | None = None
    channel: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    reasoning: str | None = None
    timestamp: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ModelCall(_Frozen):
    """Where an LM call happened, with what it cost."""

    kind: Literal["model_call"] = "model_call"
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_total: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    finish_reason: str | None = None
    timestamp: datetime | None = None


class EnvironmentEvent(_Frozen):
    kind: Literal["environment"] = "environment"
    system: str | None = None
    reward: float | None = None
    terminated: bool | None = None
    truncated: bool | None = None
    state_before: Any = None
    state_after: Any = None
    timestamp: datetime | None = None


class GradeCheckpoint(_Frozen):
    """An intermediate grade (nanoeval Step): a checkpoint, not the final score."""

    kind: Literal["checkpoint"] = "checkpoint"
    score: float | None = None
    correct: bool | None = None
    grader_log: str | None = None
    elapsed_s: float | None = None


class GenericEvent(_Frozen):
    """Any record with no better home: shown as JSON."""

    kind: Literal["event"] = "event"
    type: str
    data: Any = None
    timestamp: datetime | None = None


TranscriptItem = Annotated[
    Message | ModelCall | EnvironmentEvent | GradeCheckpoint | GenericEvent,
    Field(discriminator="kind"),
]


class Grade(_Frozen):
    score: float | None = None
    correct: bool | None = None
    grader_log: str | None = None
    finish_reason: FinishReason | None = None
    max_steps_reached: bool | None = None
    max_time_reached: bool | None = None
    max_tokens_reached: bool | None = None
    error: str | None = None


class Transcript(_Frozen):
    """One sample x attempt in full, loaded only when someone opens it."""

    run_id: str
    sample_id: str
    attempt: int = 0
    items: tuple[TranscriptItem, ...] = ()
    grade: Grade = Grade()
    raw: tuple[Any, ...] = ()  # the source records, for the "raw JSON" view
    warnings: tuple[LoadWarning, ...] = ()

    @property
    def messages(self) -> list[Message]:
        return [i for i in self.items if isinstance(i, Message)]


class SourceListing(_Frozen):
    """What a source holds: its runs, and what failed to load at source level."""

    source: str
    kind: str
    runs: tuple[Run, ...] = ()
    warnings: tuple[LoadWarning, ...] = ()


class SearchHit(_Frozen):
    """One match of a transcript search: where it is and the text around it (decoded, not JSON-escaped)."""

    run_id: str
    sample_id: str
    attempt: int = 0
    where: str = ""  # which record and JSON path, e.g. "sampling: data.prompt[1].content"
    snippet: str  # the text around the match, on one line
    start: int  # the match is snippet[start:end]
    end: int
