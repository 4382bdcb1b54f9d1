"""Message shapes of every source, normalised in one place.

Content arrives as a string, a list of `{type, text}` parts, `{content_type, parts}`
(ChatGPT export) or synth `parts[{type, text, ...}]`; roles sit in `role`,
`author.role` or only `message_type`. Unknown shapes become JSON previews, never errors.
"""

from __future__ import annotations

import json
from typing import Any

from loaders.schema import ContentPart, Message, ToolCall
from loaders.timestamps import parse_timestamp


def content_to_text(content: Any) -> tuple[str, tuple[ContentPart, ...]]:
    """Split content into its readable text and the non-text parts kept for preview."""
    if content is None:
        return "", ()
    if isinstance(content, str):
        return content, ()
    if isinstance(content, dict):
        if "parts" in content and isinstance(content.get("parts"), list):
            return _parts_to_text(content["parts"])
        if isinstance(content.get("text"), str):
            return content["text"], ()
        return "", (ContentPart(type=str(content.get("content_type") or content.get("type") or "object"), data=content),)
    if isinstance(content, list):
        return _parts_to_text(content)
    return str(content), ()


def _parts_to_text(parts: list[Any]) -> tuple[str, tuple[ContentPart, ...]]:
    texts: list[str] = []
    others: list[ContentPart] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            kind = str(part.get("type") or part.get("content_type") or "object")
            text = part.get("text")
            if isinstance(text, str) and kind in ("text", "input_text", "output_text", "object"):
                texts.append(text)
            elif isinstance(text, str) and text:
                others.append(ContentPart(type=kind, text=text))
            else:
                others.append(ContentPart(type=kind, data={k: v for k, v in part.items() if v is not None}))
        elif part is not None:
            others.append(ContentPart(type=type(part).__name__, data=part))
    return "\n".join(texts), tuple(others)


def parse_arguments(raw: Any) -> tuple[Any, str | None]:
    """Tool arguments as an object when the source gave JSON text; the raw text kept."""
    if isinstance(raw, str):
        try:
            return json.loads(raw), raw
        except ValueError:
            return raw, raw
    return raw, None


def openai_tool_calls(calls: Any) -> tuple[ToolCall, ...]:
    out: list[ToolCall] = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        args, raw = parse_arguments(fn.get("arguments", fn.get("arguments_json")))
        if fn.get("arguments") is None and fn.get("arguments_json") is not None:
            args, raw = parse_arguments(fn.get("arguments_json"))
        out.append(ToolCall(id=call.get("id") or call.get("call_id"), name=str(fn.get("name") or "?"), arguments=args, arguments_raw=raw))
    return tuple(out)


def to_message(obj: Any, *, default_role: str = "unknown") -> Message:
    """Any chat-like message object to a `Message`; unknown shapes become a JSON preview."""
    if isinstance(obj, str):
        return Message(role=default_role, text=obj)
    if not isinstance(obj, dict):
        return Message(role=default_role, parts=(ContentPart(type="object", data=obj),))
    author = obj.get("author") if isinstance(obj.get("author"), dict) else {}
    role = obj.get("role") or author.get("role") or obj.get("message_type") or default_role
    name = obj.get("name") or author.get("name")
    if "parts" in obj and "content" not in obj:
        text, parts = content_to_text(obj.get("parts"))
    else:
        text, parts = content_to_text(obj.get("content"))
    recipient = obj.get("recipient")
    tool_calls = openai_tool_calls(obj.get("tool_calls"))
    if recipient and recipient != "all" and not tool_calls:
        args, raw = parse_arguments(text)
        tool_calls = (ToolCall(name=str(recipient), arguments=args, arguments_raw=raw),)
    reasoning = obj.get("reasoning") or obj.get("reasoning_content")
    known = {"role", "author", "name", "content", "parts", "recipient", "tool_calls", "tool_call_id", "channel",
             "metadata", "reasoning", "reasoning_content", "time_record", "timestamp"}
    metadata = dict(obj.get("metadata") or {}) if isinstance(obj.get("metadata"), dict) else {}
    for key, value in obj.items():
        if key not in known and value is not None:
            metadata.setdefault(key, value)
    time_record = obj.get("time_record") if isinstance(obj.get("time_record"), dict) else {}
    return Message(
        role=str(role),
        text=text,
        parts=parts,
        name=str(name) if name else None,
        recipient=str(recipient) if recipient else None,
        channel=obj.get("channel") if isinstance(obj.get("channel"), str) else None,
        tool_calls=tool_calls,
        tool_call_id=obj.get("tool_call_id"),
        reasoning=reasoning if isinstance(reasoning, str) else None,
        timestamp=parse_timestamp(time_record.get("event_time") or obj.get("timestamp")),
        metadata=metadata,
    )
