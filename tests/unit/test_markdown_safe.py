"""The opt-in Markdown view: formatting survives, nothing live does (HTML, math, directives, images, links)."""

from __future__ import annotations

import pytest

from dashboard.components.markdown_safe import ZWSP, label_text, sanitize_markdown


@pytest.mark.parametrize("hostile", ["<script>alert(1)</script>", '<img src="http://x/y.png" onerror="alert(1)">',
                                     "<style>.stApp{display:none}</style>", "<http://x/autolink>"])
def test_no_raw_html_or_autolink(hostile):
    out = sanitize_markdown(hostile)
    assert "<" not in out and out.startswith("&lt;")


def test_dollars_escaped():
    assert sanitize_markdown("$E=mc^2$ and $$x$$") == r"\$E=mc^2\$ and \$\$x\$\$"


def test_directives_and_icons_neutralised():
    out = sanitize_markdown(":red[x] :blue-badge[y] :material/home: ::leaf[z]")
    assert ":red" not in out and ":material" not in out and ":blue" not in out and "::leaf" not in out
    assert out.replace(ZWSP, "").replace("\\", "") == ":red[x] :blue-badge[y] :material/home: ::leaf[z]"


def test_images_become_alt_text_and_url():
    out = sanitize_markdown('see ![a chart](http://127.0.0.1:9/x.png "t") here')
    assert "![" not in out and "](" not in out
    assert out == r"see a chart (image: http\://127.0.0.1:9/x.png) here"


def test_links_become_text_and_url_and_javascript_is_dropped():
    assert sanitize_markdown("[docs](https://example.com/a)") == r"docs (https\://example.com/a)"
    out = sanitize_markdown("[click](javascript:alert(document.cookie))")
    assert out == "click (javascript: link removed)"
    assert "JAVASCRIPT" not in sanitize_markdown("[x](JAVASCRIPT:alert(1))")


def test_reference_links_and_images_cannot_form():
    out = sanitize_markdown("![r]\n[r]: http://127.0.0.1:9/x.png\n[^1]")
    assert "[" not in out.replace("\\[", "")
    assert "]" not in out.replace("\\]", "")


def test_bare_urls_stay_text():
    out = sanitize_markdown("go to http://evil.example/x or www.evil.example")
    assert "http\\://evil.example" in out and "www\\.evil" in out


def test_formatting_kept():
    text = "# Title\n\n**bold** _it_ ~~gone~~\n\n- a\n- b\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert sanitize_markdown(text) == text


def test_fenced_code_kept_verbatim_math_fence_demoted():
    text = "```python\nif a < b and cost > $3:\n    print(':red[x]')\n```\nafter $y$\n"
    assert sanitize_markdown(text) == "```python\nif a < b and cost > $3:\n    print(':red[x]')\n```\nafter \\$y\\$\n"
    assert sanitize_markdown("```math\nx^2\n```") == "```text\nx^2\n```"
    assert sanitize_markdown("~~~~ latex\n$x$\n~~~~") == "~~~~text\n$x$\n~~~~"


def test_indented_fence_is_not_trusted():
    # inside a list item a fence may end early; only column-0 fences keep their content unescaped
    out = sanitize_markdown("- item\n   ```\n![i](http://127.0.0.1:9/x.png)\n   ```")
    assert "![" not in out and "(image: http\\://127.0.0.1:9/x.png)" in out


def test_unclosed_fence_runs_to_the_end():
    assert sanitize_markdown("```\n<b>$x$") == "```\n<b>$x$"


def test_inline_code_kept_but_not_across_table_pipes():
    assert sanitize_markdown("use `a<b $x$` now") == "use `a<b $x$` now"
    out = sanitize_markdown("| `x | ![i](http://127.0.0.1:9/x.png) ` |")
    assert "![" not in out and "\\`x" in out


def test_backslash_cannot_escape_our_escapes():
    assert sanitize_markdown("\\$x\\$") == "\\\\\\$x\\\\\\$"
    assert sanitize_markdown("\\<b>") == "\\\\&lt;b>"


def test_label_text_is_one_line_all_punctuation_escaped():
    out = label_text("![x](http://127.0.0.1:9/x.png)\n:red[a] $b$ <i>")
    assert "\n" not in out
    for ch in "![]()$<>":
        assert ch not in out.replace("\\" + ch, "")
    assert ":red" not in out
    assert len(label_text("x" * 500, 80)) == 80
