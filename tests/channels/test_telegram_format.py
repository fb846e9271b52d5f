"""Answers become Telegram messages that Telegram accepts: valid HTML, never over 4096
characters, nothing lost, and splitting that does not move text already sent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aistack_tui.channels.telegram_format import (
    MAX_MESSAGE_CHARS,
    approval_text,
    callback_data,
    parse_callback,
    render_all,
    split_chunks,
)
from fakes.fake_telegram_state import ApiError, visible_text

_pieces = st.sampled_from([
    "word ", "a < b && c > d ", "**bold** ", "`x<y>` ", "\n", "\n\n", "```python\n",
    "```\n", "def f():\n    return 1 & 2\n", "<b>not markup</b> ", "&amp; ", "ünïcödé ",
    "x" * 300, "\n```diff\n-old\n+new\n```\n",
])


def _accepted(html: str) -> str:
    """What Telegram stores for this HTML, failing the test when Telegram would reject it."""
    try:
        text = visible_text(html, "HTML")
    except ApiError as e:  # pragma: no cover - the assertion message is the point
        raise AssertionError(f"Telegram rejects {html!r}: {e.description}") from e
    assert len(text) <= MAX_MESSAGE_CHARS
    return text


@settings(max_examples=150, deadline=None)
@given(st.lists(_pieces, max_size=60))
def test_every_message_is_valid_html_under_the_limit(parts: list[str]) -> None:
    text = "".join(parts)
    for html in render_all(text):
        _accepted(html)


@settings(max_examples=100, deadline=None)
@given(st.lists(_pieces, min_size=1, max_size=60), st.lists(_pieces, max_size=30))
def test_growing_answer_never_changes_full_messages(head: list[str], more: list[str]) -> None:
    before = split_chunks("".join(head), limit=500)
    after = split_chunks("".join(head + more), limit=500)
    assert after[: len(before) - 1] == before[:-1]


def test_long_answer_splits_at_paragraphs_and_keeps_every_word() -> None:
    paragraphs = [f"paragraph {i} " + "lorem ipsum " * 40 for i in range(30)]
    text = "\n\n".join(paragraphs)
    messages = [_accepted(html) for html in render_all(text)]
    assert len(messages) > 1
    joined = " ".join(messages)
    for i in range(30):
        assert f"paragraph {i} " in joined
    assert all(m.rstrip().endswith("ipsum") for m in messages[:-1])  # cut between paragraphs


def test_code_block_cut_by_the_limit_is_reopened_in_the_next_message() -> None:
    code = "\n".join(f"line_{i} = {i} < {i + 1}" for i in range(400))
    text = f"Here:\n```python\n{code}\n```\nDone."
    htmls = render_all(text)
    assert len(htmls) >= 2
    assert htmls[1].startswith('<pre><code class="language-python">')
    assert "line_399 = 399 &lt; 400" in "".join(htmls)
    for html in htmls:
        _accepted(html)


def test_markdown_becomes_telegram_markup_and_the_rest_is_escaped() -> None:
    [html] = render_all("Use **care** with `a<b>` & <script>\n```sh\nrm -rf x\n```")
    assert "<b>care</b>" in html
    assert "<code>a&lt;b&gt;</code>" in html
    assert "&amp; &lt;script&gt;" in html
    assert '<pre><code class="language-sh">rm -rf x</code></pre>' in html


def test_approval_prompt_shows_the_diff_as_a_code_block_within_the_limit() -> None:
    diff = "--- a/app.py\n+++ b/app.py\n" + "".join(f"-old {i} <\n+new {i} >\n" for i in range(2000))
    html = approval_text("Edit", "Edit app.py", "edits need approval in default mode", diff,
                         ("outside the project",))
    text = _accepted(html)
    assert '<pre><code class="language-diff">--- a/app.py' in html
    assert "more lines" in text and "⚠️ outside the project" in text


def test_button_data_round_trips_and_fits_telegram() -> None:
    for choice in ("once", "session", "reject"):
        data = callback_data("12345", choice)
        assert len(data.encode()) <= 64
        assert parse_callback(data) == ("12345", choice)
    assert parse_callback("ap:1:save") is None
    assert parse_callback("other") is None
