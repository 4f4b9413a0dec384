"""What a question asks, as Slack blocks, from the one reading of it (`agent_wait.channels.reading`): the headline as
the message's header, then one section per call (its description as mrkdwn, its arguments as fields), or the
question's text and facts; and the part of the modal that takes a batched review's decisions, one per call.

Every text from the question is escaped for mrkdwn (`&`, `<`, `>`) before Markdown becomes mrkdwn, so a question can
neither mention `@channel` nor forge a link.
"""

from __future__ import annotations

import re
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)

from agent_wait.channels.reading import NEEDS_MORE, Call, Kind, Reading, shown

__all__ = ("CALL_BLOCK", "DECISION_BLOCK", "MESSAGE_BLOCK", "asked_blocks", "decision_inputs", "escape", "mrkdwn")

CALL_BLOCK = "call:"
"""A call's section is `call:<n>`, in the order the question lists its calls."""
DECISION_BLOCK, MESSAGE_BLOCK = "decision:", "message:"
"""A batched review's modal inputs: one decision per call (`decision:<n>`), and its optional message."""
HEADER_MAX, SECTION_MAX, FIELD_MAX, FIELDS_MAX = 150, 3000, 2000, 10


def escape(text: Any) -> str:
    """Text for Slack mrkdwn: `&`, `<` and `>` escaped, as Slack requires, so nothing becomes a mention or link."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_MRKDWN = (  # emphasis first: once `**bold**` is `*bold*`, it would read as emphasis
    (re.compile(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])"), r"_\1_"),
    (re.compile(r"\*\*([^*\n]+)\*\*"), r"*\1*"),
    (re.compile(r"__([^_\n]+)__"), r"*\1*"),
    (re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE), r"*\1*"),
    (re.compile(r"^(\s*)[-+] ", re.MULTILINE), r"\1• "),
)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s|]+)\)")


def mrkdwn(markdown: str) -> str:
    """A description's Markdown as Slack mrkdwn, escaped first: `**bold**` becomes `*bold*`, `*emphasis*` `_emphasis_`,
    a heading a bold line, a `-` item a bullet; a link keeps its label."""
    text = escape(markdown)
    for pattern, replacement in _MRKDWN:
        text = pattern.sub(replacement, text)
    return _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", text)


def _fields(args: Any) -> list[MarkdownTextObject]:
    return [
        MarkdownTextObject(text=clip(f"*{escape(name)}*\n{escape(shown(value))}", FIELD_MAX))
        for name, value in list(args.items())[:FIELDS_MAX]
    ]


def _call_section(call: Call, n: int, reading: Reading, waiting: bool) -> SectionBlock:
    """One call: its name (numbered in a review), its description, its arguments as fields."""
    if reading.kind is Kind.REVIEW:
        allows = f"\n_allows {', '.join(call.decisions)}_" if call.decisions else ""
        title = f"*{n + 1}. `{escape(call.name)}`*{allows}"
    else:
        title = f"`{escape(call.name)}` {'waits for an answer' if waiting else 'was asked'}"
    text = f"{title}\n{mrkdwn(call.description)}" if call.description else title
    return SectionBlock(
        block_id=f"{CALL_BLOCK}{n}", text=MarkdownTextObject(text=clip(text, SECTION_MAX)), fields=_fields(call.args)
    )


def asked_blocks(reading: Reading, *, waiting: bool = True) -> list[Block]:
    """The header and what is asked: a section per call, or the question's text and facts."""
    blocks: list[Block] = [HeaderBlock(text=PlainTextObject(text=clip(reading.headline, HEADER_MAX)))]
    if reading.kind is Kind.REVIEW:
        count = f"{len(reading.calls)} tool calls of one model turn"
        blocks.append(
            SectionBlock(text=MarkdownTextObject(text=f"{count} {'wait for review' if waiting else 'were reviewed'}:"))
        )
    blocks.extend(_call_section(call, n, reading, waiting) for n, call in enumerate(reading.calls[:40]))
    if reading.calls:
        return blocks
    if reading.text.strip() and reading.text.strip() != reading.headline:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=clip(mrkdwn(reading.text), SECTION_MAX))))
    if reading.facts:
        blocks.append(SectionBlock(text=MarkdownTextObject(text="Details"), fields=_fields(dict(reading.facts))))
    if reading.form:
        wanted = ", ".join(f"{escape(f.title)}{' (required)' if f.required else ''}" for f in reading.form)
        blocks.append(SectionBlock(text=MarkdownTextObject(text=clip(f"_The answer gives:_ {wanted}", SECTION_MAX))))
    return blocks


def decision_inputs(reading: Reading) -> list[Block]:
    """A batched review's part of the modal: each call as asked, its decision (the ones a form can give) and an
    optional message (a reject's reason, a respond's reply)."""
    blocks: list[Block] = []
    for n, call in enumerate(reading.calls[:30]):
        blocks.append(_call_section(call, n, reading, True))
        choices = [d for d in call.decisions if d not in NEEDS_MORE or d == "respond"]
        options = [Option(text=PlainTextObject(text=d.replace("_", " ").capitalize()), value=d) for d in choices]
        if not options:  # a call that takes only an edit: the inbox decides it (the message links it)
            continue
        blocks.append(
            InputBlock(
                block_id=f"{DECISION_BLOCK}{n}",
                label=PlainTextObject(text=clip(f"Decision for {call.name}", 2000)),
                element=StaticSelectElement(action_id="value", options=options, initial_option=options[0]),
            )
        )
        blocks.append(
            InputBlock(
                block_id=f"{MESSAGE_BLOCK}{n}",
                label=PlainTextObject(text="Message (a reject's reason, a respond's reply)"),
                element=PlainTextInputElement(action_id="value", multiline=True, max_length=1000),
                optional=True,
            )
        )
    return blocks
