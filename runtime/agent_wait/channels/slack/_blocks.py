"""A question as Slack Block Kit: the message people answer with its buttons, the same message once decided, and
the modal that edits a call's arguments or fills a `response_schema`.

Built with `slack_sdk.models.blocks`, whose classes check Slack's limits; every text from the question is escaped
for Slack's mrkdwn (`&`, `<`, `>`), so a question can neither mention `@channel` nor forge a link.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    InputBlock,
    MarkdownTextObject,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)

from agent_wait.channels.asked import Decided, call_of, summary
from agent_wait.channels.reading import Kind, read
from agent_wait.channels.slack._asked import asked_blocks, clip, decision_inputs, escape, mrkdwn
from agent_wait.channels.slack._grants import grant_buttons
from agent_wait.common.times import parse_rfc3339
from agent_wait.contract.bound_call import APPROVE
from agent_wait.contract.envelope import WaitEnvelope

__all__ = (
    "ACTION_PREFIX",
    "MODAL_CALLBACK",
    "OPEN_MODAL",
    "Decided",
    "call_of",
    "escape",
    "modal_view",
    "open_blocks",
    "summary",
)

ACTION_PREFIX = "agent_wait:answer:"
"""A button's `action_id` is this and the action it answers with; its `value` is the question id."""
OPEN_MODAL = "agent_wait:modal"
"""The button that opens the modal (edit the call's arguments, fill a form, or add a note)."""
MODAL_CALLBACK = "agent_wait:answer"
"""The modal's `callback_id`; its `private_metadata` is the question id."""
ACTION_BLOCK, NOTE_BLOCK, ARG_BLOCK = "action", "note", "arg:"
"""The modal's input block ids: the action, the note, and one per argument or form field (`arg:<name>`)."""

_PRIMARY = ("approve", "accept", "yes", "allow")
_DANGER = ("reject", "deny", "no", "ignore", "cancel")
_HEADER_MAX, _SECTION_MAX, _FIELD_MAX, _FIELDS_MAX = 150, 3000, 2000, 10


_SLACK_PERSON = re.compile(r"slack:[A-Z0-9]+:([UW][A-Z0-9]+)")
"""The person key of a Slack user whose address the app cannot read (`slack:<team>:<user>`)."""


def person_text(answered_by: str | None) -> str:
    """Who decided, for mrkdwn: a Slack user's key as a mention Slack shows by name, anything else escaped."""
    if not answered_by:
        return "someone unnamed"
    slack_user = _SLACK_PERSON.fullmatch(answered_by)
    return f"<@{slack_user.group(1)}>" if slack_user else escape(answered_by)


_clip = clip


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _when(iso: str | None) -> str:
    """Slack's date formatting (each reader's own time zone), with the RFC 3339 time as the fallback text."""
    if not iso or iso == "never":
        return "no deadline"
    moment = parse_rfc3339(iso)
    return f"<!date^{int(moment.timestamp())}^{{date_short_pretty}} at {{time}}|{escape(iso)}>"


def _who(envelope: WaitEnvelope, mentions: Mapping[str, str]) -> str:
    answerers = envelope.rules.get("answerers") if isinstance(envelope.rules, Mapping) else None
    if not isinstance(answerers, Mapping):
        return "anyone who can open this"
    groups = [mentions.get(g) or escape(g) for g in answerers.get("groups") or ()]
    people = [escape(p) for p in answerers.get("principals") or ()]
    named = groups + people
    return " or ".join(named) if named else "nobody"


def _asked_blocks(envelope: WaitEnvelope, *, waiting: bool = True) -> list[Block]:
    return asked_blocks(read(envelope), waiting=waiting)


def _facts(envelope: WaitEnvelope, mentions: Mapping[str, str], inbox_url: str | None) -> ContextBlock:
    parts = [f"Answer by {_when(envelope.expires_at)}", f"Who may answer: {_who(envelope, mentions)}"]
    if envelope.tags:
        parts.append(", ".join(f"{escape(k)}: {escape(v)}" for k, v in envelope.tags.items()))
    if inbox_url:
        parts.append(f"<{inbox_url}|Open in the inbox>")
    return ContextBlock(elements=[MarkdownTextObject(text=" · ".join(parts))])


def _votes_line(progress: Mapping[str, Any] | None) -> str | None:
    if not progress or not isinstance(progress.get("votes"), list):
        return None
    votes = ", ".join(f"{person_text(v.get('by'))} ({escape(v.get('action'))})" for v in progress["votes"])
    count = f"*{progress.get('approvals', 0)} of {progress.get('needed', '?')} approvals*"
    remaining = progress.get("remaining")
    more = f": {remaining} more needed" if isinstance(remaining, int) and remaining > 0 else ""
    return f"{count}{more}" + (f" · votes: {votes}" if votes else "")


def _modal_label(envelope: WaitEnvelope) -> str | None:
    """The modal button's label: decide each call, fill the form, edit the call, reply, or answer with a note; None
    when there is none."""
    reading = read(envelope)
    if reading.kind is Kind.REVIEW:
        return "Decide each call…"
    if reading.kind is Kind.SCHEMA or isinstance(envelope.rules.get("response_schema"), Mapping):
        return "Answer…" if reading.form or not reading.one_click else "Answer with a note…"
    replies = any(a in ("respond", "response") for a in envelope.allowed_actions)
    if call_of(envelope) is not None and envelope.rules.get("edits") is not False:
        return "Edit or reply…" if replies else "Edit…"
    if replies:
        return "Reply…"
    return "Answer with a note…" if envelope.allowed_actions else None


def open_blocks(
    envelope: WaitEnvelope,
    *,
    inbox_url: str | None = None,
    mentions: Mapping[str, str] | None = None,
    progress: Mapping[str, Any] | None = None,
) -> list[Block]:
    """The message for an open question: what is asked, the deadline and who may answer, one button per action.

    `mentions` maps an answerer group to how Slack mentions it (`<!subteam^S0123>`); `progress` is a quorum's votes.
    """
    mentions = mentions or {}
    blocks = _asked_blocks(envelope)
    votes = _votes_line(progress)
    if votes:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=votes)))
    buttons: list[ButtonElement] = []
    for action in read(envelope).one_click[:20]:
        style = "primary" if action in _PRIMARY else "danger" if action in _DANGER else None
        buttons.append(
            ButtonElement(
                text=PlainTextObject(text=_clip(action.replace("_", " ").capitalize(), 75)),
                action_id=f"{ACTION_PREFIX}{action}",
                value=envelope.question_id,
                style=style,
            )
        )
        if action == APPROVE:  # approve and grant: each offer the question takes, and "Approve and allow…"
            buttons.extend(grant_buttons(envelope))
    label = _modal_label(envelope)
    if label:
        buttons.append(
            ButtonElement(text=PlainTextObject(text=label), action_id=OPEN_MODAL, value=envelope.question_id)
        )
    if buttons:
        blocks.append(ActionsBlock(block_id=f"answer:{envelope.question_id}"[:255], elements=buttons[:25]))
    blocks.append(_facts(envelope, mentions, inbox_url))
    return blocks


_VIA = {"slack": "in Slack", "api": "in the inbox or the API", "link": "with a signed link", "queue": "on the queue"}


def _answer_text(answer: Any) -> str:
    if isinstance(answer, Mapping) and isinstance(answer.get("action"), str):
        # A quorum's deciding answer carries every vote (`votes`): the votes line shows them, each voter by name.
        rest = {k: v for k, v in answer.items() if k not in ("action", "votes")}
        details = "; ".join(f"{escape(k)}: {escape(_shown(v))}" for k, v in rest.items())
        return f"*{escape(answer['action'])}*" + (f" ({details})" if details else "")
    if isinstance(answer, Mapping) and isinstance(answer.get("decisions"), list):
        return ", ".join(f"*{escape(d.get('type'))}*" for d in answer["decisions"] if isinstance(d, Mapping))
    return f"`{escape(_clip(_shown(answer), 500))}`"


def decided_blocks(envelope: WaitEnvelope, decided: Decided, *, inbox_url: str | None = None) -> list[Block]:
    """The message once the question is decided: no buttons; who answered what, when and how, or the default."""
    blocks = _asked_blocks(envelope, waiting=False)
    when = _when(decided.decided_at) if decided.decided_at else "just now"
    if decided.status == "expired":
        applied = _answer_text(decided.answer)
        line = f":alarm_clock: Nobody answered by the deadline ({when}): the default applied, {applied}."
    elif decided.status == "cancelled" and decided.reason:
        who = person_text(decided.answered_by)
        line = f":no_entry_sign: {who} cancelled it at {when}: “{escape(decided.reason)}”. The agent carries on."
    elif decided.status == "cancelled":
        line = f":no_entry_sign: Withdrawn {when}: the agent moved on without an answer."
    elif decided.via == "grant":  # nobody was asked: a person's standing grant approved it
        line = f":white_check_mark: {_by_grant(decided)} at {when}."
    else:
        who = person_text(decided.answered_by)
        via = _VIA.get(decided.via or "", f"via {escape(decided.via)}" if decided.via else "")
        line = f":white_check_mark: {who} answered {_answer_text(decided.answer)} {via} at {when}."
    blocks.append(SectionBlock(text=MarkdownTextObject(text=_clip(line, _SECTION_MAX))))
    votes = _votes_line(decided.progress)
    if votes:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=votes)]))
    after = []
    if decided.status == "failed":
        after.append(":warning: The agent failed while carrying on; an operator must retry the thread.")
    elif decided.resumed_at:
        after.append(f"The agent carried on at {_when(decided.resumed_at)}.")
    if inbox_url:
        after.append(f"<{inbox_url}|Open in the inbox>")
    if after:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=" · ".join(after))]))
    return blocks


def reminder_text(envelope: WaitEnvelope, mentions: Mapping[str, str]) -> str:
    """A thread reply for a reminder: still open, answer by the deadline."""
    progress = envelope.progress or {}
    which = f" ({progress.get('reminder')} of {progress.get('of')})" if progress.get("reminder") else ""
    who, by = _who(envelope, mentions), _when(envelope.expires_at)
    return f":bell: Reminder{which}: this still waits for {who}; answer by {by}."


def escalation_text(envelope: WaitEnvelope, mentions: Mapping[str, str]) -> str:
    """A thread reply (and the new audience's message) for an escalation step."""
    progress = envelope.progress or {}
    step = f" (step {progress.get('escalation')} of {progress.get('of')})" if progress.get("escalation") else ""
    return f":arrow_up: Escalated{step}: {_who(envelope, mentions)} may answer now."


# -- the modal ---------------------------------------------------------------------------------------------------


def _input_for(name: str, schema: Mapping[str, Any], initial: Any, *, required: bool) -> InputBlock:
    """One typed input: a number, a choice of an enum, or text (several lines for long text or JSON)."""
    label = PlainTextObject(text=_clip(str(schema.get("title") or name), 2000))
    hint = PlainTextObject(text=_clip(str(schema["description"]), 2000)) if schema.get("description") else None
    kind = schema.get("type")
    if isinstance(initial, bool) or kind == "boolean":
        element: Any = StaticSelectElement(
            action_id="value",
            options=[Option(text=PlainTextObject(text=t), value=t) for t in ("true", "false")],
            initial_option=Option(
                text=PlainTextObject(text=str(bool(initial)).lower()), value=str(bool(initial)).lower()
            )
            if isinstance(initial, bool)
            else None,
        )
    elif isinstance(schema.get("enum"), list) and schema["enum"]:
        options = [
            Option(text=PlainTextObject(text=_clip(_shown(c), 75)), value=json.dumps(c)) for c in schema["enum"][:100]
        ]
        chosen = [o for o, c in zip(options, schema["enum"], strict=False) if c == initial]
        element = StaticSelectElement(action_id="value", options=options, initial_option=chosen[0] if chosen else None)
    elif kind in ("integer", "number") or (isinstance(initial, (int, float)) and kind is None):
        element = NumberInputElement(
            action_id="value",
            is_decimal_allowed=kind == "number" or isinstance(initial, float),
            initial_value=str(initial) if isinstance(initial, (int, float)) else None,
        )
    else:
        text = initial if isinstance(initial, str) else (json.dumps(initial) if initial is not None else None)
        element = PlainTextInputElement(
            action_id="value",
            initial_value=text,
            multiline=bool(text and (len(text) > 60 or "\n" in text)) or kind not in (None, "string"),
        )
    return InputBlock(
        block_id=f"{ARG_BLOCK}{name}"[:255], label=label, element=element, hint=hint, optional=not required
    )


def modal_view(envelope: WaitEnvelope) -> dict[str, Any]:
    """The modal: the action, then the call's arguments (edits) or the answer's form (`response_schema`), a note."""
    reading = read(envelope)
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=_clip(f"*{escape(reading.headline)}*", 3000)))]
    if reading.kind is Kind.REVIEW:  # a decision per call, each with its message: the answer is `{"decisions"}`
        return _modal(envelope, [*blocks, *decision_inputs(reading)])
    if not reading.calls and reading.text.strip() and reading.text.strip() != reading.headline:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=_clip(mrkdwn(reading.text), 3000))))
    schema = envelope.rules.get("response_schema")
    call = call_of(envelope)
    if envelope.allowed_actions:
        options = [
            Option(text=PlainTextObject(text=a.replace("_", " ").capitalize()), value=a)
            for a in envelope.allowed_actions
        ]
        blocks.append(
            InputBlock(
                block_id=ACTION_BLOCK,
                label=PlainTextObject(text="Answer"),
                element=StaticSelectElement(action_id="value", options=options[:100], initial_option=options[0]),
            )
        )
    if isinstance(schema, Mapping) and isinstance(schema.get("properties"), Mapping):
        required = set(schema.get("required") or ())
        for name, declared in list(schema["properties"].items())[:40]:
            if name in ("action", "note"):
                continue
            prop = declared if isinstance(declared, Mapping) else {}
            blocks.append(_input_for(name, prop, prop.get("default"), required=name in required))
    elif call is not None and envelope.rules.get("edits") is not False:
        declared = (envelope.source or {}).get("args_schema")
        properties = declared.get("properties", {}) if isinstance(declared, Mapping) else {}
        for name, value in list(call.args.items())[:40]:
            found = properties.get(name)
            blocks.append(_input_for(name, found if isinstance(found, Mapping) else {}, value, required=False))
    blocks.append(
        InputBlock(
            block_id=NOTE_BLOCK,
            label=PlainTextObject(text="Note"),
            element=PlainTextInputElement(action_id="value", multiline=True, max_length=1000),
            optional=True,
        )
    )
    return _modal(envelope, blocks)


def _modal(envelope: WaitEnvelope, blocks: list[Block]) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": MODAL_CALLBACK,
        "private_metadata": envelope.question_id,
        "title": {"type": "plain_text", "text": "Answer"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [block.to_dict() for block in blocks[:100]],
    }


def plain_text(envelope: WaitEnvelope) -> str:
    """The notification text Slack shows where blocks cannot be (a push notification, a screen reader's summary)."""
    return _clip(f"Waiting for an answer: {escape(summary(envelope))}", 3000)


def decided_text(envelope: WaitEnvelope, decided: Decided) -> str:
    """The notification text once the question is decided: how it ended, then what was asked."""
    return _clip(f"{_ending(decided)}: {escape(summary(envelope))}", 3000)


def _ending(decided: Decided) -> str:
    if decided.status == "expired":
        return f"Nobody answered in time; the default applied{_quoted_action(decided.answer, ', ')}"
    if decided.status == "cancelled" and decided.reason:
        return f"{person_text(decided.answered_by)} cancelled it"
    if decided.status == "cancelled":
        return "Withdrawn: the agent moved on without an answer"
    if decided.via == "grant":
        answered = _by_grant(decided)
        return f"{answered}; the agent carried on" if decided.resumed_at else answered
    via = _VIA.get(decided.via or "", f"via {escape(decided.via)}" if decided.via else "")
    answered = f"{person_text(decided.answered_by)} answered{_quoted_action(decided.answer, ' ')}" + (
        f" {via}" if via else ""
    )
    if decided.status == "failed":
        return f"{answered}, but the agent failed carrying on"
    return f"{answered}; the agent carried on" if decided.resumed_at else answered


def _by_grant(decided: Decided) -> str:
    """Who decided a question a standing grant approved: "Approved by a standing grant from ana@… (grant …)"."""
    grant = f" (grant `{escape(decided.grant_id)}`)" if decided.grant_id else ""
    return f"Approved by a standing grant from {person_text(decided.answered_by)}{grant}"


def _quoted_action(answer: Any, before: str) -> str:
    action = answer.get("action") if isinstance(answer, Mapping) else None
    return f"{before}“{escape(action)}”" if isinstance(action, str) else ""


def to_dicts(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    return [block.to_dict() for block in blocks]


def epoch(moment: datetime) -> str:
    """A time as Slack's `oldest` parameter takes it."""
    return f"{moment.timestamp():.6f}"
