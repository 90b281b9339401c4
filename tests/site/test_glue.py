"""glue_code: a string read from a store or a results file is untrusted; as inline code it must
stay one code span whatever backticks or newlines it holds (no live HTML reaches the page)."""
from __future__ import annotations

import html as html_module

import pytest
from markdown_it import MarkdownIt

import attnrank_lite.site.glue as g

ATTACKS = [
    "attnrank sweep --store x.sqlite",
    "a `` <img src=x onerror=alert(1)> `` b",
    "``` <img src=x onerror=alert(1)> ```",
    "`<img src=x onerror=alert(1)>`",
    "x ` y ```` <b>bold</b> `` z",
    "line one\n\n<img src=x onerror=alert(1)>\n\nline three",
    "`",
]


def _glued_markdown(monkeypatch, text: str) -> str:
    seen = {}

    class Markdown:  # stands in for IPython.display.Markdown
        def __init__(self, data):
            self.data = data

    def fake_glue(name, value, display=True):
        seen[name] = value.data

    monkeypatch.setattr(g, "_myst_glue", fake_glue)
    import IPython.display

    monkeypatch.setattr(IPython.display, "Markdown", Markdown)
    g.glue_code("cmd", text)
    return seen["cmd"]


@pytest.mark.parametrize("text", ATTACKS)
def test_glued_code_is_one_code_span_and_no_html(monkeypatch, text):
    html = MarkdownIt("commonmark").render(_glued_markdown(monkeypatch, text)).strip()
    assert html.startswith("<p><code>") and html.endswith("</code></p>")
    assert html.count("<code>") == 1 and "<img" not in html and "<b>" not in html
    body = html[len("<p><code>"):-len("</code></p>")]
    # what the reader sees is the text itself (whitespace runs shown as one space)
    assert html_module.unescape(body) == " ".join(text.split())
