"""A question as an Adaptive Card (schema 1.5), the body a Teams Workflows webhook takes, and the outcome card.

Every text that comes from the question (the call's name and arguments, a description, a prompt) is made safe
for the card's Markdown subset before it is placed: a link's `](` is broken, so a question cannot dress a link to
anywhere as a button or a word; bare URLs stay visible as they are. The deadline is written with the card
language's `{{DATE()}}` and `{{TIME()}}` functions, so each reader sees it in their own time zone.

Cards stay well under Teams' message limit (about 28 KB): at most `MAX_FACTS` facts, each value clipped to
`MAX_FACT_CHARS`, the summary to `MAX_TITLE_CHARS`, a description to `MAX_TEXT_CHARS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_wait.channels.asked import Decided, summary
from agent_wait.channels.reading import Call, Kind, Reading, read, shown
from agent_wait.common.times import parse_rfc3339
from agent_wait.contract.bound_call import APPROVE
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.engine.offered import offer_index, offer_links

__all__ = (
    "CARD_CONTENT_TYPE",
    "CARD_VERSION",
    "MAX_FACTS",
    "Decided",
    "Notice",
    "outcome_card",
    "question_card",
    "summary",
    "webhook_body",
)

CARD_VERSION = "1.5"
"""The Adaptive Cards schema version every card declares (what Teams renders on desktop, web and mobile)."""
CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
"""The attachment content type of an Adaptive Card in a Teams message."""
CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
MAX_FACTS = 20
MAX_FACT_CHARS = 500
MAX_TITLE_CHARS = 200
MAX_TEXT_CHARS = 2000

UNBOUND_LINK = "signed link"
"""`answered_by` of an answer given through a link made for nobody (the answer API's `LINK_ANSWERED_BY`)."""
_POSITIVE = ("approve", "accept", "yes", "allow")
_DESTRUCTIVE = ("reject", "deny", "no", "ignore", "cancel")
_LINK = re.compile(r"\]\s*[(\[:]")


def safe(text: Any) -> str:
    """Question text for the card's Markdown: a Markdown link (`[label](url)`, `[label][ref]`, `[ref]: url`) is
    broken with a zero-width space, so it shows as typed instead of a disguised link."""
    return _LINK.sub(lambda match: "]\u200b" + match.group(0)[1:], str(text))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def when(iso: str | None) -> str:
    """A time as the card language writes it in each reader's time zone; `no deadline` for none."""
    if not iso or iso == "never":
        return "no deadline"
    moment = parse_rfc3339(iso).strftime("%Y-%m-%dT%H:%M:%SZ")  # the functions take no fractions of a second
    return f"{{{{DATE({moment}, SHORT)}}}} at {{{{TIME({moment})}}}}"


def who(envelope: WaitEnvelope) -> str:
    """Who may answer, as the policy names them."""
    answerers = envelope.rules.get("answerers") if isinstance(envelope.rules, Mapping) else None
    if not isinstance(answerers, Mapping):
        return "anyone who has the links"
    named = [*(answerers.get("groups") or ()), *(answerers.get("principals") or ())]
    return " or ".join(safe(name) for name in named) if named else "nobody"


def _text(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


@dataclass(frozen=True, slots=True)
class Notice:
    """What a follow-up card says above the question: a reminder, an escalation to a new audience, or a new
    deadline."""

    title: str
    """The headline (`Reminder 1 of 2: this still waits for your answer`)."""
    color: str = "Warning"
    """The headline's color (`Warning` for a reminder, `Attention` for an escalation, `Accent` for an extension)."""


def reminder_notice(envelope: WaitEnvelope) -> Notice:
    progress = envelope.progress or {}
    which = f" {progress.get('reminder')} of {progress.get('of')}" if progress.get("reminder") else ""
    return Notice(f"Reminder{which}: this still waits for an answer")


def escalation_notice(envelope: WaitEnvelope) -> Notice:
    progress = envelope.progress or {}
    step = f" (step {progress.get('escalation')} of {progress.get('of')})" if progress.get("escalation") else ""
    answerers = envelope.rules.get("answerers") if isinstance(envelope.rules, Mapping) else None
    if not isinstance(answerers, Mapping):  # still anyone's to answer: the step only widened who is told
        return Notice(f"Escalated{step}: this still waits for an answer", color="Attention")
    return Notice(f"Escalated{step}: {who(envelope)} may answer now", color="Attention")


def extension_notice(envelope: WaitEnvelope) -> Notice:
    """The headline of a `wait.extended` card: the new deadline, and that earlier cards' buttons stop at the old."""
    previous = (envelope.progress or {}).get("from")
    stop = f"; those on earlier cards stop at {when(previous)}" if isinstance(previous, str) else ""
    return Notice(f"Deadline extended to {when(envelope.expires_at)}: use these buttons{stop}", "Accent")


def _facts(args: Mapping[str, Any]) -> dict[str, Any]:
    facts = [
        {"title": safe(_clip(str(name), 100)), "value": safe(_clip(shown(value), MAX_FACT_CHARS))}
        for name, value in list(args.items())[:MAX_FACTS]
    ]
    return {"type": "FactSet", "facts": facts, "spacing": "Small"}


def _call(call: Call, n: int, reading: Reading) -> dict[str, Any]:
    """One call in a container of its own (`call-<n>`): its name (numbered in a review), description, arguments."""
    items: list[dict[str, Any]] = []
    if reading.kind is Kind.REVIEW:
        allows = f" · allows {', '.join(call.decisions)}" if call.decisions else ""
        items.append(_text(f"**{n + 1}. {safe(call.name)}**{allows}", spacing="None"))
    else:
        items.append(_text(f"**{safe(call.name)}** waits for an answer", spacing="None"))
    if call.description:
        items.append(_text(safe(_clip(call.description, MAX_TEXT_CHARS)), spacing="Small"))
    if call.args:
        items.append(_facts(call.args))
    separated = reading.kind is Kind.REVIEW and n > 0
    return {"type": "Container", "id": f"call-{n}", "items": items, "spacing": "Medium", "separator": separated}


def _asked(envelope: WaitEnvelope, headline: dict[str, Any]) -> list[dict[str, Any]]:
    reading = read(envelope)
    body: list[dict[str, Any]] = [
        headline,
        _text(safe(_clip(reading.headline, MAX_TITLE_CHARS)), size="Large", weight="Bolder", style="heading"),
    ]
    if reading.kind is Kind.REVIEW:
        body.append(_text(f"{len(reading.calls)} tool calls of one model turn:", spacing="Small", isSubtle=True))
    body.extend(_call(call, n, reading) for n, call in enumerate(reading.calls[:MAX_FACTS]))
    if not reading.calls and reading.text.strip() and reading.text.strip() != reading.headline:
        body.append(_text(safe(_clip(reading.text, MAX_TEXT_CHARS))))
    if not reading.calls and reading.facts:
        body.append(_facts(dict(reading.facts)))
    if reading.form:
        wanted = ", ".join(f"{safe(f.title)}{' (required)' if f.required else ''}" for f in reading.form)
        body.append(_text(f"The answer gives: {wanted}", isSubtle=True, spacing="Small"))
    return body


def question_card(
    envelope: WaitEnvelope,
    links: Mapping[str, str],
    *,
    inbox_url: str | None = None,
    notice: Notice | None = None,
    progress: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The card for an open question: what is asked, its facts, the deadline and who may answer, and one
    `Action.OpenUrl` per signed link (`links`, by action) to its confirmation page.

    Args:
        envelope: the question's envelope.
        links: the signed links this card carries, by action; empty: the card says where to answer instead.
        inbox_url: the inbox page for this question; a last button when given.
        notice: a reminder, escalation or extension headline; None for the question as first asked.
        progress: a quorum's votes so far (a reminder of a quorum question says how many are still needed).
    """
    headline = (
        _text(notice.title, weight="Bolder", color=notice.color)
        if notice is not None
        else _text("Waiting for an answer", weight="Bolder", color="Accent", size="Small")
    )
    body = _asked(envelope, headline)
    details = [f"Answer by {when(envelope.expires_at)}", f"Who may answer: {who(envelope)}"]
    votes = (progress or {}).get("votes")
    if isinstance(votes, list):
        details.append(f"{(progress or {}).get('approvals', 0)} of {(progress or {}).get('needed', '?')} approvals")
    body.append(_text(" · ".join(details), isSubtle=True, spacing="Medium"))
    offers = offer_links(envelope, links)
    actions: list[dict[str, Any]] = []
    for action, url in links.items():
        if offer_index(action) is not None:
            continue
        actions.append(_action_button(action, url))
        if action == APPROVE:  # each grant offer right after Approve: its own signed link, its label on the button
            actions.extend({"type": "Action.OpenUrl", "title": offer.label, "url": offer.url} for offer in offers)
    body.extend(_text(f"{safe(offer.label)}: allows {safe(offer.words)}.", isSubtle=True) for offer in offers)
    elsewhere = read(envelope).elsewhere
    if elsewhere and inbox_url:
        body.append(_text(elsewhere, isSubtle=True))
    if links:
        body.append(
            _text("Each button opens a page that asks you to confirm; opening it decides nothing.", isSubtle=True)
        )
    elif not inbox_url:
        body.append(_text("Answer it in the agent-wait inbox.", isSubtle=True))
    if inbox_url:
        actions.append({"type": "Action.OpenUrl", "title": "Open in the inbox", "url": inbox_url})
    return _card(body, actions, fallback=f"Waiting for an answer: {summary(envelope)}")


def _action_button(action: str, url: str) -> dict[str, Any]:
    button: dict[str, Any] = {"type": "Action.OpenUrl", "title": action.replace("_", " ").capitalize(), "url": url}
    if action in _POSITIVE:
        button["style"] = "positive"
    elif action in _DESTRUCTIVE:
        button["style"] = "destructive"
    return button


_VIA = {
    "slack": "in Slack",
    "api": "in the inbox or the API",
    "link": "with a signed link",
    "queue": "on the queue",
    "deadline": "at the deadline",
}


def _answer_text(answer: Any) -> str:
    if isinstance(answer, Mapping) and isinstance(answer.get("action"), str):
        rest = {k: v for k, v in answer.items() if k != "action"}
        details = "; ".join(f"{safe(k)}: {safe(_clip(_shown(v), MAX_FACT_CHARS))}" for k, v in rest.items())
        return f"**{safe(answer['action'])}**" + (f" ({details})" if details else "")
    if isinstance(answer, Mapping) and isinstance(answer.get("decisions"), list):
        return ", ".join(f"**{safe(d.get('type'))}**" for d in answer["decisions"] if isinstance(d, Mapping))
    return safe(_clip(_shown(answer), MAX_FACT_CHARS))


def outcome_card(envelope: WaitEnvelope, decided: Decided, *, inbox_url: str | None = None) -> dict[str, Any]:
    """The follow-up card once the question is decided, expired, withdrawn or failed: no answer buttons; who
    answered what, when and how, or that the deadline applied the default."""
    at = when(decided.decided_at) if decided.decided_at else "just now"
    if decided.status == "expired":
        line = f"Nobody answered by the deadline ({at}): the default applied, {_answer_text(decided.answer)}."
        headline = _text("Expired", weight="Bolder", color="Warning")
    elif decided.status == "cancelled" and decided.reason:
        who = safe((decided.answered_by or "someone unnamed").removeprefix("email:"))
        line = f"{who} cancelled it at {at}: “{safe(decided.reason)}”. The agent carries on."
        headline = _text("Cancelled", weight="Bolder", color="Default")
    elif decided.status == "cancelled":
        line = f"Withdrawn {at}: the agent moved on without an answer."
        headline = _text("Withdrawn", weight="Bolder", color="Default")
    elif decided.status == "failed":
        line = "The agent failed while carrying on with the answer; an operator must retry the thread."
        headline = _text("Failed", weight="Bolder", color="Attention")
    elif decided.via == "grant":  # nobody was asked: a person's standing grant approved it
        granter = safe((decided.answered_by or "someone unnamed").removeprefix("email:"))
        grant = f" (grant {safe(decided.grant_id)})" if decided.grant_id else ""
        line = f"Approved by a standing grant from {granter}{grant} at {at}."
        headline = _text("Answered", weight="Bolder", color="Good")
    elif decided.via == "link" and decided.answered_by in (None, UNBOUND_LINK):
        line = f"Someone with the card's link answered {_answer_text(decided.answer)} at {at}."
        headline = _text("Answered", weight="Bolder", color="Good")
    else:
        answered_by = safe((decided.answered_by or "someone unnamed").removeprefix("email:"))
        via = _VIA.get(decided.via or "", f"via {safe(decided.via)}" if decided.via else "")
        line = f"{answered_by} answered {_answer_text(decided.answer)} {via} at {at}.".replace("  ", " ")
        headline = _text("Answered", weight="Bolder", color="Good")
    body = [*_asked(envelope, headline), _text(line, spacing="Medium")]
    actions = [{"type": "Action.OpenUrl", "title": "Open in the inbox", "url": inbox_url}] if inbox_url else []
    return _card(body, actions, fallback=f"{headline['text']}: {summary(envelope)}")


def _card(body: Sequence[dict[str, Any]], actions: Sequence[dict[str, Any]], *, fallback: str) -> dict[str, Any]:
    card: dict[str, Any] = {
        "type": "AdaptiveCard",
        "$schema": CARD_SCHEMA,
        "version": CARD_VERSION,
        "fallbackText": safe(_clip(fallback, MAX_TITLE_CHARS)),
        "body": list(body),
    }
    if actions:
        card["actions"] = list(actions)
    return card


def webhook_body(card: Mapping[str, Any], *, about: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON a Teams Workflows webhook ("When a Teams webhook request is received") takes: a message with the
    card as its one attachment, and `agent_wait` (`about`) beside it for a flow to read (the recipient, the ids)."""
    return {
        "type": "message",
        "attachments": [{"contentType": CARD_CONTENT_TYPE, "contentUrl": None, "content": dict(card)}],
        "agent_wait": dict(about),
    }
