"""The Slack-like HTML preview of Block Kit messages and modals (agent_wait.channels.slack.preview)."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

from agent_wait.channels.slack.preview import PreviewMessage, mrkdwn_to_html, preview_modal, preview_page

TS = "1733300000.000100"


class Tree(HTMLParser):
    """Every start tag with its attributes, the text, and the nesting checked as it goes."""

    VOID = frozenset({"meta", "br", "hr", "img", "input", "link"})

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.open: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open, f"</{tag}> closes nothing"
        assert self.open[-1] == tag, f"</{tag}> closes <{self.open[-1]}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]

    def with_class(self, css: str) -> list[dict[str, str | None]]:
        return [attrs for _, attrs in self.tags if css in (attrs.get("class") or "").split()]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def page_of(*messages: PreviewMessage, **kwargs: Any) -> Tree:
    tree = Tree(preview_page(messages, **kwargs))
    assert tree.open == [], "unclosed elements"
    return tree


def message(blocks: list[dict[str, Any]] | None = None, text: str = "", **kwargs: Any) -> PreviewMessage:
    return PreviewMessage(channel="C1", ts=TS, blocks=blocks or [], text=text, **kwargs)


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


QUESTION = [
    {"type": "header", "text": {"type": "plain_text", "text": "Refund 120 EUR?"}},
    {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "Order *A-17*"},
        "fields": [{"type": "mrkdwn", "text": "*Amount*\n120 EUR"}, {"type": "plain_text", "text": "Customer: Ana"}],
        "accessory": {"type": "button", "text": {"type": "plain_text", "text": "Open"}, "url": "https://example.com/o"},
    },
    {"type": "divider"},
    {
        "type": "actions",
        "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "Approve"}, "style": "primary", "value": "y"},
            {"type": "button", "text": {"type": "plain_text", "text": "Reject"}, "style": "danger", "value": "n"},
            {"type": "button", "text": {"type": "plain_text", "text": "Answer"}, "value": "open"},
            {"type": "button", "text": {"type": "plain_text", "text": "Bad"}, "url": "javascript:alert(1)"},
        ],
    },
    {
        "type": "context",
        "elements": [
            {"type": "mrkdwn", "text": "Expires _in 2 h_"},
            {"type": "image", "image_url": "https://example.com/c.png", "alt_text": "clock"},
        ],
    },
]


# -- the page's structure ----------------------------------------------------------------------------------------


def test_page_structure() -> None:
    tree = page_of(message(QUESTION), title="Question <preview>")
    assert [name for name, _ in tree.tags[:2]] == ["html", "head"]
    assert len(tree.named("style")) == 1  # all CSS in one element, for a CSP hash or nonce
    assert tree.named("script") == []
    assert tree.named("img") == []  # nothing loaded from elsewhere
    assert tree.named("link") == []
    for _, attrs in tree.tags:
        assert "style" not in attrs
        assert not any(name.startswith("on") for name in attrs)
    assert "Question <preview>" in tree.all_text
    assert len(tree.with_class("channel")) == 1
    assert "C1" in tree.all_text
    assert len(tree.with_class("avatar")) == 1
    assert "agent-wait" in tree.all_text
    (time,) = tree.named("time")
    assert time["datetime"] == "2024-12-04T08:13:20+00:00"
    assert "08:13" in tree.all_text


def test_blocks_render() -> None:
    tree = page_of(message(QUESTION))
    assert tree.with_class("header")
    assert "Refund 120 EUR?" in tree.all_text
    fields = tree.with_class("fields")
    assert len(fields) == 1
    assert len(tree.with_class("field-cell")) == 2
    assert "Customer: Ana" in tree.all_text
    assert len(tree.with_class("divider")) == 1
    assert len(tree.with_class("context")) == 1
    assert "image: clock" in tree.all_text


def test_button_styles_and_url_buttons() -> None:
    tree = page_of(message(QUESTION))
    buttons = tree.with_class("button")
    assert [attrs["class"] for attrs in buttons] == [
        "button default",  # the accessory (a url button)
        "button primary",
        "button danger",
        "button default",
        "button default",
    ]
    links = tree.named("a")
    assert [attrs["href"] for attrs in links] == ["https://example.com/o"]
    assert all(attrs.get("type") == "button" for attrs in tree.named("button"))


def test_unknown_block_is_a_grey_line() -> None:
    tree = page_of(message([{"type": "video", "title": {"type": "plain_text", "text": "x"}}, "not a block"]))  # type: ignore[list-item]
    assert [attrs["class"] for attrs in tree.with_class("unsupported")] == ["unsupported", "unsupported"]
    assert "unsupported block: video" in tree.all_text


def test_fallback_text_without_blocks() -> None:
    tree = page_of(message(text="Refund *120* EUR?"))
    assert "Refund 120 EUR?" in tree.all_text
    assert tree.named("strong")


# -- escaping ----------------------------------------------------------------------------------------------------


def test_script_in_text_is_escaped() -> None:
    page = preview_page([message([section("<script>alert(1)</script>")], text="<script>x</script>")])
    tree = Tree(page)
    assert tree.named("script") == []
    assert "<script>alert(1)</script>" in tree.all_text  # shown as text
    assert "&lt;script&gt;" in page
    plain = preview_page([message([{"type": "header", "text": {"type": "plain_text", "text": "<b>hi</b>"}}])])
    assert Tree(plain).named("b") == []


def test_unsafe_links_are_not_links() -> None:
    html_text = mrkdwn_to_html("<javascript:alert(1)|click me> <data:text/html,x|data> <https://ok.example|ok>")
    tree = Tree(html_text)
    assert [attrs["href"] for attrs in tree.named("a")] == ["https://ok.example"]
    assert "click me" in tree.all_text
    assert "javascript" not in html_text


def test_slack_entities_are_not_escaped_twice() -> None:
    assert mrkdwn_to_html("a &amp; b &lt;c&gt;") == "a &amp; b &lt;c&gt;"
    assert mrkdwn_to_html("AT&T") == "AT&amp;T"  # a bare & (not Slack-escaped) is escaped once too
    assert mrkdwn_to_html("&amp;lt;") == "&amp;lt;"  # Slack-escaped "&lt;" stays the four characters
    assert (
        mrkdwn_to_html("<https://x.example/?a=1&amp;b=2|q&amp;a>")
        == '<a href="https://x.example/?a=1&amp;b=2" rel="noopener noreferrer nofollow">q&amp;a</a>'
    )


def test_attribute_injection_through_a_url_is_escaped() -> None:
    tree = Tree(mrkdwn_to_html('<https://x.example/"onmouseover="alert(1)|x>'))
    (link,) = tree.named("a")
    assert link["href"] == 'https://x.example/"onmouseover="alert(1)'
    assert set(link) == {"href", "rel"}


# -- mrkdwn ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("*bold*", "<strong>bold</strong>"),
        ("_italic_", "<em>italic</em>"),
        ("~strike~", "<del>strike</del>"),
        ("`a *b* <c>`", "<code>a *b* &lt;c&gt;</code>"),
        ("```\nx = *1*\n```", '<pre class="code-block">x = *1*</pre>'),
        ("snake_case_name 2*3*4", "snake_case_name 2*3*4"),
        ("one\ntwo", "one<br>two"),
        ("&gt; quoted\n> also\nafter", "<blockquote>quoted<br>also</blockquote>after"),
        (
            "<https://example.com>",
            '<a href="https://example.com" rel="noopener noreferrer nofollow">https://example.com</a>',
        ),
        ("<mailto:a@example.com|mail>", '<a href="mailto:a@example.com" rel="noopener noreferrer nofollow">mail</a>'),
        ("<@U123>", '<span class="mention">@U123</span>'),
        ("<@U123|ana>", '<span class="mention">@ana</span>'),
        ("<#C1|approvals>", '<span class="mention">#approvals</span>'),
        ("<!subteam^S123>", '<span class="mention">@S123</span>'),
        ("<!subteam^S123|@approvers>", '<span class="mention">@approvers</span>'),
        ("<!here>", '<span class="mention">@here</span>'),
        ("<!date^1392734382^{date_short}|Feb 18, 2014>", "Feb 18, 2014"),
        ("*<@U1>* approved", '<strong><span class="mention">@U1</span></strong> approved'),
    ],
)
def test_mrkdwn(text: str, expected: str) -> None:
    assert mrkdwn_to_html(text) == expected


# -- threads, edits, modals --------------------------------------------------------------------------------------


def test_thread_replies_and_edited_marker() -> None:
    reply = PreviewMessage(channel="C1", ts="1733300000.000200", text="Reminder: still open")
    answered = PreviewMessage(channel="C1", ts="1733300000.000300", text="Answered by <@U5>", edited=True)
    parent = message([section("Refund?")], edited=True, replies=(reply, answered))
    other = PreviewMessage(channel="C1", ts="1733300001.000100", text="next question")
    tree = page_of(parent, other)
    assert len(tree.with_class("message")) == 4
    assert len(tree.with_class("reply")) == 2
    assert len(tree.with_class("thread")) == 1
    assert "2 replies" in tree.all_text
    assert len(tree.with_class("edited")) == 2
    assert "(edited)" in tree.all_text
    page = preview_page([parent, other])
    # The replies sit inside the parent's thread, before the next message.
    assert page.index("Reminder: still open") < page.index("Answered by") < page.index("next question")
    assert page.index('class="thread"') < page.index("Reminder: still open")


def test_channels_are_grouped() -> None:
    tree = page_of(message(text="a"), PreviewMessage(channel="C2", ts=TS, text="b"), message(text="c"))
    assert len(tree.with_class("channel")) == 2


MODAL: dict[str, Any] = {
    "type": "modal",
    "title": {"type": "plain_text", "text": "Answer"},
    "submit": {"type": "plain_text", "text": "Send"},
    "close": {"type": "plain_text", "text": "Cancel"},
    "blocks": [
        section("Refund *120 EUR*?"),
        {
            "type": "input",
            "label": {"type": "plain_text", "text": "Reason"},
            "hint": {"type": "plain_text", "text": "Shown to the agent"},
            "element": {
                "type": "plain_text_input",
                "multiline": True,
                "placeholder": {"type": "plain_text", "text": "Why?"},
            },
        },
        {
            "type": "input",
            "label": {"type": "plain_text", "text": "Amount"},
            "optional": True,
            "element": {"type": "number_input", "is_decimal_allowed": False, "initial_value": "120"},
        },
        {
            "type": "input",
            "label": {"type": "plain_text", "text": "Decision"},
            "element": {
                "type": "static_select",
                "placeholder": {"type": "plain_text", "text": "Choose"},
                "options": [{"text": {"type": "plain_text", "text": "Approve"}, "value": "a"}],
            },
        },
        {
            "type": "input",
            "label": {"type": "plain_text", "text": "Flags"},
            "element": {
                "type": "checkboxes",
                "options": [
                    {"text": {"type": "plain_text", "text": "Notify"}, "value": "n"},
                    {"text": {"type": "plain_text", "text": "Escalate"}, "value": "e"},
                ],
                "initial_options": [{"text": {"type": "plain_text", "text": "Notify"}, "value": "n"}],
            },
        },
    ],
}


def test_modal() -> None:
    tree = Tree(preview_modal(MODAL))
    assert tree.open == []
    assert len(tree.with_class("modal")) == 1
    assert "Answer" in tree.all_text
    assert len(tree.with_class("input")) == 4
    assert "Reason" in tree.all_text
    assert "Why?" in tree.all_text  # the placeholder
    assert len(tree.with_class("placeholder")) == 2  # Reason and Decision
    assert len(tree.with_class("multiline")) == 1
    assert "120" in tree.all_text  # the initial value
    assert "(optional)" in tree.all_text
    assert "Shown to the agent" in tree.all_text
    assert len(tree.with_class("on")) == 1  # the initially checked box
    footer = [attrs["class"] for attrs in tree.with_class("button")]
    assert footer == ["button default", "button primary"]
    assert "Cancel" in tree.all_text
    assert "Send" in tree.all_text


def test_page_includes_modals() -> None:
    tree = page_of(message(QUESTION), modals=[MODAL])
    assert len(tree.with_class("modal")) == 1
    assert len(tree.with_class("modals")) == 1
    assert len(tree.named("style")) == 1


def test_rich_text() -> None:
    block = {
        "type": "rich_text",
        "elements": [
            {
                "type": "rich_text_section",
                "elements": [
                    {"type": "text", "text": "<b>", "style": {"bold": True}},
                    {"type": "link", "url": "javascript:x", "text": "bad"},
                    {"type": "link", "url": "https://example.com", "text": "good"},
                    {"type": "user", "user_id": "U1"},
                ],
            },
            {"type": "rich_text_list", "style": "ordered", "elements": [{"type": "rich_text_section", "elements": []}]},
        ],
    }
    tree = page_of(message([block]))
    assert "<b>" in tree.all_text
    assert tree.named("b") == []
    assert [attrs["href"] for attrs in tree.named("a")] == ["https://example.com"]
    assert len(tree.named("ol")) == 1
