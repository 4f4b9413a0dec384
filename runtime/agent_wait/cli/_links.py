"""`agent-wait link`, and the links `agent-wait dev` prints: signed answer links on the local stack.

`agent-wait dev` keeps link keys in its emulator's Secrets Manager (the stack's own when it has an answer API
with links, else keys it makes), and its answer API verifies them: a link printed here, opened in a browser,
answers the question as a link sent by email would (`docs/answering.md`, "Signed links").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_wait.cli._target import CliError, Target

__all__ = ("envelope_links", "no_links_reason", "question_link")


def _keys(target: Target) -> Any:
    from agent_wait.host.links import LinkKeys

    if not (target.link_keys_arn and target.api_url):
        raise CliError(
            f"no link keys are known for {target.source}: `agent-wait link` signs links for the running `agent-wait "
            "dev`; a deployed stack sends its links in its announcements (link_announcers)"
        )
    return LinkKeys.load(target.link_keys_arn, client=target.client("secretsmanager"))


def _why_none(envelope: Any, approver: str | None) -> str:
    """Why `answer_links` made no link for `envelope` (it makes none in three cases)."""
    if envelope.rules.get("answerers"):
        if approver is None:
            return (
                "its policy names who may answer, and a link made for nobody proves no one: make it for a named "
                "answerer principal (--for email:ana@example.com), or answer it in the inbox or with a token"
            )
        return f"its policy names who may answer, and {approver} is not one of its answerer principals"
    if envelope.rules.get("quorum") and approver is None:
        return "it needs a quorum, which counts people: make the link for one (--for alice@example.com)"
    return "its deadline has passed"


def no_links_reason(envelope: Mapping[str, Any]) -> str:
    """Why an announced question got no signed link (`envelope_links` returned none)."""
    from agent_wait.contract.envelope import WaitEnvelope

    return _why_none(WaitEnvelope.from_dict(envelope), None)


def envelope_links(target: Target, envelope: Mapping[str, Any]) -> dict[str, str]:
    """The signed links of an announced `wait.created` envelope, by action: those it carries (`reply_to.links`,
    for the announcers named in `link_announcers`), else links signed now with the stack's keys. Empty when the
    question can have none (see `question_link`)."""
    from agent_wait.common.times import utc_now
    from agent_wait.contract.envelope import WaitEnvelope
    from agent_wait.host.links import answer_links

    carried = (envelope.get("reply_to") or {}).get("links")
    if carried:
        return dict(carried)
    return answer_links(_keys(target), str(target.api_url), WaitEnvelope.from_dict(envelope), now=utc_now())


def question_link(target: Target, question_id: str, action: str, *, approver: str | None = None) -> str:
    """A signed link that answers `question_id` with `action`, for the running `agent-wait dev`'s answer API.

    Args:
        target: the running `agent-wait dev` (its answer API and link keys).
        question_id: an open question.
        action: one of its allowed actions.
        approver: who the link is made for (recorded as `answered_by`); None records "signed link".

    Raises:
        CliError: no dev is running with link keys, the question is unknown or no longer open, the action is
            not one of its actions, or the question can have no link (its policy names who may answer and
            `approver` is not among them, it needs a quorum and no approver was given, or its deadline has
            passed).
    """
    from agent_wait.cli._commands import ledger_record
    from agent_wait.common.times import utc_now
    from agent_wait.contract.schema import QuestionStatus
    from agent_wait.host.links import answer_links

    keys = _keys(target)
    record = ledger_record(target, question_id)
    if record.status is not QuestionStatus.OPEN:
        raise CliError(f"question {question_id} is {record.status.value}: a link answers an open question only")
    allowed = record.envelope.allowed_actions
    if action not in allowed:
        raise CliError(f"{action!r} is not one of question {question_id}'s actions: {', '.join(allowed)}")
    links = answer_links(keys, str(target.api_url), record.envelope, now=utc_now(), approver=approver)
    if not links:
        raise CliError(f"question {question_id} can have no signed link: {_why_none(record.envelope, approver)}")
    return links[action]
