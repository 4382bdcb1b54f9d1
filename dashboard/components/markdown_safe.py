"""Markdown that model output cannot weaponise: pure functions, no streamlit import.

Streamlit's Markdown turns `$..$` into KaTeX, `:red[..]` / `:material/x:` into styled
text and icons, loads remote `![..](..)` images and renders links. Transcript text is
written by models and tools, so the opt-in "Render Markdown" view goes through
`sanitize_markdown`, and untrusted strings used as widget labels (which Streamlit also
reads as Markdown) go through `label_text`.

Why the code handling is careful: text inside code is shown verbatim, so it is left
alone, but only where CommonMark is certain to treat it as code too (a fence opened at
column 0, a code span on one line without `|`). Anything else is escaped: the worst a
misjudgement can do is show a stray backslash, never render live Markdown.
"""

from __future__ import annotations

import re

ZWSP = "\u200b"  # breaks `:name[` directives and `:icon:` shortcodes without changing what is shown

_FENCE_OPEN = re.compile(r"^(`{3,})[^`]*$|^(~{3,}).*$")
_LINK = re.compile(r"""(!?)\[([^\[\]\n]*)\]\(\s*<?((?:[^\s()<>]|\([^\s()<>]*\))*)>?(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)""")
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*):")
_SAFE_SCHEMES = {"http", "https", "mailto"}
_MATH_LANGS = {"math", "latex", "katex", "tex"}
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|www)([:.])")  # GFM turns bare http://, www. into links
_COLON_WORD = re.compile(r":(?=[A-Za-z])")
_BACKTICKS = re.compile(r"`+")
# Characters escaped in running text. `[`/`]` kill every link and image form (inline,
# reference, footnote); `\` is doubled so a source backslash never escapes our output.
_TEXT_ESCAPES = {"\\": "\\\\", "$": "\\$", "[": "\\[", "]": "\\]", "`": "\\`", "&": "&amp;", "<": "&lt;"}
_TEXT_ESCAPE_RE = re.compile("[" + re.escape("".join(_TEXT_ESCAPES)) + "]")
_LABEL_ESCAPE_RE = re.compile(r"([!-/:-@\[-`{-~])")


def _link_to_text(match: re.Match[str]) -> str:
    bang, text, url = match.group(1), match.group(2), match.group(3)
    scheme = _SCHEME.match(url)
    if scheme and scheme.group(1).lower() not in _SAFE_SCHEMES:
        url = f"{scheme.group(1).lower()}: link removed"
    if bang:
        return f"{text or 'image'} (image: {url})" if url else (text or "image")
    return f"{text} ({url})" if url and url != text else (text or url)


def _escape_text(text: str) -> str:
    """Running text: links/images to text, then everything that could become live escaped."""
    text = _LINK.sub(_link_to_text, text)
    text = _TEXT_ESCAPE_RE.sub(lambda m: _TEXT_ESCAPES[m.group(0)], text)
    text = _AUTOLINK.sub(lambda m: m.group(1) + "\\" + m.group(2), text)  # bare URLs stay text, not links
    return _COLON_WORD.sub(":" + ZWSP, text)


def _escape_line(line: str) -> str:
    """One line outside fences: keep same-line code spans (no `|`, so a table cannot split them), escape the rest."""
    out: list[str] = []
    text_start = 0
    runs = list(_BACKTICKS.finditer(line))
    i = 0
    while i < len(runs):
        opening = runs[i]
        closing_index = next((j for j in range(i + 1, len(runs)) if len(runs[j].group(0)) == len(opening.group(0))), None)
        if closing_index is None:
            i += 1
            continue
        closing = runs[closing_index]
        content = line[opening.end():closing.start()]
        if "|" in content or not content.strip():
            i += 1  # not kept as code: its backticks get escaped with the surrounding text
            continue
        out.append(_escape_text(line[text_start:opening.start()]))
        out.append(line[opening.start():closing.end()])
        text_start = closing.end()
        i = closing_index + 1
    out.append(_escape_text(line[text_start:]))
    return "".join(out)


def sanitize_markdown(text: str) -> str:
    """Markdown for `st.markdown` that shows formatting but runs nothing and fetches nothing.

    - raw HTML: `<`, `>` and `&` become entities, so no tag or autolink can form;
    - `$` is escaped (no KaTeX); `:word` gets a zero-width space (no `:red[..]`, `:material/x:`, emoji);
    - `![alt](url)` becomes "alt (image: url)" and `[text](url)` becomes "text (url)", as plain text,
      and every other `[`/`]` is escaped, so reference links and images cannot form either; bare URLs
      (GFM autolinks) stay text;
    - fenced code at column 0 and one-line code spans are kept verbatim (code is never interpreted).
    """
    out: list[str] = []
    fence: tuple[str, int] | None = None  # (fence char, length) while inside a fenced block
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        end = line[len(body):]
        if fence is not None:
            out.append(line)
            stripped = body.lstrip(" ")
            char, length = fence
            if len(body) - len(stripped) <= 3 and re.fullmatch(re.escape(char) + f"{{{length},}}[ \\t]*", stripped):
                fence = None
            continue
        opened = _FENCE_OPEN.match(body)
        if opened:
            marker = opened.group(1) or opened.group(2)
            fence = (marker[0], len(marker))
            info = body[len(marker):].strip().lower()
            # rehype-katex renders ```math blocks as LaTeX: show those as plain code
            out.append(marker + "text" + end if info.split(" ")[0] in _MATH_LANGS else line)
            continue
        out.append(_escape_line(body) + end)
    return "".join(out)


def label_text(text: str, max_chars: int = 80) -> str:
    """An untrusted string as a widget label (labels are Markdown): one line, every punctuation escaped."""
    one_line = " ".join(str(text).split())
    if len(one_line) > max_chars:
        one_line = one_line[: max_chars - 1] + "…"
    escaped = _LABEL_ESCAPE_RE.sub(r"\\\1", one_line)
    return re.sub(r"\\:(?=[A-Za-z])", "\\\\:" + ZWSP, escaped)
