"""What a person sees in Slack, without a workspace: the channel's preview.

- `preview(announcer, envelope)`: the question's message as `announcer` draws it after `envelope` (a reminder's or
  an escalation's reply in its thread), as one page;
- `question_modal(envelope)`: the form its modal button opens (`preview_page(..., modals=[...])` draws it);
  `grant_modal(envelope)` the "Approve and allow…" modal;
- `questions_page(records)`: `agent-wait dev`'s `/dev/slack`: each question's message as its row stands now, its
  buttons links that answer as the Teams preview's do (the question's signed answer links, else its inbox page);
- `preview_page`, `preview_modal`, `PreviewMessage`, `mrkdwn_to_html`: the drawing itself, Block Kit as HTML
  (`_html.py`: one static page, no script, standard library only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agent_wait.channels.contract import Rendered
from agent_wait.channels.slack import _blocks, _grants
from agent_wait.channels.slack._html import BOT_NAME, PreviewMessage, mrkdwn_to_html, preview_modal, preview_page
from agent_wait.channels.slack.announce import DECIDED, SlackAnnounce, message_blocks
from agent_wait.common.times import parse_rfc3339
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.engine.offered import offer_key

__all__ = (
    "BOT_NAME",
    "PreviewMessage",
    "grant_modal",
    "mrkdwn_to_html",
    "preview",
    "preview_modal",
    "preview_page",
    "question_modal",
    "questions_page",
)

_DIRECT = "direct message"
"""Where a question no channel routes goes: a direct message to each Slack user it names."""


def preview(announcer: SlackAnnounce, envelope: WaitEnvelope) -> Rendered:
    """The question's message as `announcer` draws it after `envelope`, with the reply a reminder or an escalation
    adds to its thread, as one page."""
    transition = envelope.transition
    if transition in DECIDED:
        blocks, text = announcer.decided_message(envelope, transition)
    else:
        progress = envelope.progress if transition is Transition.VOTED else None
        blocks, text = announcer.open_blocks(envelope, progress=progress), _blocks.plain_text(envelope)
    channel = announcer.routing.channel_for(envelope.tags) or _DIRECT
    ts = f"{announcer.clock().timestamp():.6f}"  # posted (or redrawn) now
    say = {Transition.REMINDER: _blocks.reminder_text, Transition.ESCALATED: _blocks.escalation_text}.get(transition)
    replies = (PreviewMessage(channel, ts, text=say(envelope, announcer.routing.mention_texts())),) if say else ()
    message = PreviewMessage(channel, ts, blocks, text, replies, edited=transition is not Transition.CREATED)
    title = f"Slack · {envelope.type}"
    return Rendered("text/html", preview_page([message], title=title), title=title)


def question_modal(envelope: WaitEnvelope) -> dict[str, Any]:
    """The modal a question's form button opens (edit the call, decide each call of a review, fill the answer's
    form), as the door sends it to `views.open`."""
    return _blocks.modal_view(envelope)


def grant_modal(envelope: WaitEnvelope) -> dict[str, Any]:
    """The modal the "Approve and allow…" button opens (scope, time, uses, a pin per argument), as the door sends it
    to `views.open`."""
    return _grants.grant_modal_view(envelope)


def questions_page(
    records: Iterable[Any],
    *,
    inbox_url: str | None = None,
    links: Mapping[str, Mapping[str, str]] | None = None,
    title: str = "Slack preview",
) -> str:
    """Each question's message as its row (`QuestionRecord`) stands: open with its buttons and votes, or decided.
    `inbox_url` is the inbox page (`https://.../inbox`) every message links to. With no workspace to take a click,
    each button is a link (`_answering_buttons`): `links` are the signed answer links of each open question, by
    question id and action."""
    messages = []
    for record in records:
        link = f"{inbox_url}#/questions/{record.question_id}" if inbox_url else None
        blocks = message_blocks(record, inbox_url=link)
        if record.status.value == "open":
            blocks = _answering_buttons(blocks, (links or {}).get(record.question_id, {}), link)
        asked = parse_rfc3339(record.asked_at).timestamp()
        edited = record.status.value != "open"
        messages.append(PreviewMessage("questions", f"{asked:.6f}", blocks, record.question_id, edited=edited))
    return preview_page(messages, title=title)


def _answering_buttons(
    blocks: list[dict[str, Any]], links: Mapping[str, str], question_page: str | None
) -> list[dict[str, Any]]:
    """`blocks` with each answer button a link, as the Teams preview's buttons are: an action's button to its
    signed answer link (the link page, which asks the person to confirm), else, as the modal's button always (an
    edit, a form, a note), to the question in the inbox. A button neither can serve stays as it was."""

    def linked(element: dict[str, Any]) -> dict[str, Any]:
        action_id = str(element.get("action_id", ""))
        if action_id.startswith(_grants.GRANT_PREFIX):  # an offer: its signed link when made, else the inbox form
            url = links.get(offer_key(int(action_id.removeprefix(_grants.GRANT_PREFIX)))) or question_page
            return {**element, "url": url} if url else element
        if action_id == _grants.OPEN_GRANT_MODAL:  # the inbox's "Approve and allow…" form
            return {**element, "url": question_page} if question_page else element
        if not (action_id.startswith(_blocks.ACTION_PREFIX) or action_id == _blocks.OPEN_MODAL):
            return element
        url = links.get(action_id.removeprefix(_blocks.ACTION_PREFIX)) or question_page
        return {**element, "url": url} if url else element

    return [
        {**block, "elements": [linked(element) for element in block.get("elements", ())]}
        if block.get("type") == "actions"
        else block
        for block in blocks
    ]
