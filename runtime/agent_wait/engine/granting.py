"""Granting while answering: an approval that carries a `grant` makes a standing grant, through the one decision path.

Every door grants the same way: it passes the answer as the person sent it, `{"action": "approve", "grant": {...}}`
(`agent_wait.policy.grants.GrantRequest`), and the desk (`agent_wait.engine.answering.AnswerDesk`) does the rest:

1. `split_grant` takes the `grant` field off the answer; the rest is the answer that is checked, recorded and given to
   the agent (the agent never sees the grant).
2. `grant_for` checks the request against the question asked, its policy and the person, before anything is written:
   a grant that would widen the call, outlive or outnumber the policy's limits, or come from someone who may not grant
   refuses the whole answer (`grant_refused`), so nothing is decided and nothing granted.
3. Once the approval decided the question (or had decided it: the same answer again), the desk keeps the grant under
   its derived id (`agent_wait.ledger.grants.grant_id_for`), so a redelivered answer makes it once. A door that dies
   between the decision and the grant's write makes it when the same answer comes again (the queue redelivers; the
   API's client retries with its `Idempotency-Key`).

`grant_offers` is what a door without a form (Teams and email links, Slack's buttons) offers beside Approve: the
policy's fixed `GrantOffer`s that this question's call satisfies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_wait.contract.bound_call import APPROVE, wait_call
from agent_wait.contract.envelope import WaitEnvelope
from agent_wait.engine.checks import Answerer
from agent_wait.errors import GrantError
from agent_wait.ledger import QuestionRecord
from agent_wait.ledger.grants import Grant, new_grant
from agent_wait.policy.followup import FollowUps
from agent_wait.policy.grants import GrantOffer, GrantRequest, Grants, grant_terms

__all__ = ("GRANT_FIELD", "grant_for", "grant_offers", "split_grant")

GRANT_FIELD = "grant"
"""The answer field that asks for a standing grant beside an approval."""


def split_grant(answer: Any) -> tuple[Any, GrantRequest | None]:
    """`answer` without its `grant` field, and the grant it asks for (None when it asks for none, or when `answer` is
    not an action answer: a dialect's native answer keeps its fields).

    Raises:
        GrantError: the `grant` field is not a grant request (`bad_grant`, saying what it takes).
    """
    # Only an answer in agent-wait's own shape (with an `action`) carries a grant: a dialect's native answer or a
    # free-form response may well have a field of that name, and it is theirs.
    if not isinstance(answer, Mapping) or "action" not in answer or GRANT_FIELD not in answer:
        return answer, None
    rest = {key: value for key, value in answer.items() if key != GRANT_FIELD}
    return rest, GrantRequest.parse(answer[GRANT_FIELD])


@dataclass(frozen=True, slots=True)
class _AskedPolicy:
    """What `grant_terms` reads of a policy, as the question's envelope carries it."""

    grants: Grants | None
    response_schema: Any
    allowed_actions: tuple[str, ...]
    quorum: Any
    tags: Mapping[str, str]


def _asked_policy(envelope: WaitEnvelope) -> _AskedPolicy:
    rules = envelope.rules if isinstance(envelope.rules, Mapping) else {}
    raw = rules.get("grants")
    return _AskedPolicy(
        grants=None if raw is None else Grants.parse(raw),
        response_schema=rules.get("response_schema"),
        allowed_actions=tuple(envelope.allowed_actions),
        quorum=FollowUps.of(rules).quorum,
        tags=dict(envelope.tags or {}),
    )


def grant_for(
    record: QuestionRecord, request: GrantRequest, answer: Any, answerer: Answerer, *, now: datetime
) -> Grant:
    """The grant `answerer`'s `answer` (without its `grant` field) to `record`'s question makes at `now`.

    The caller has already checked that this person may answer the question: a grant never reaches further than its
    granter's own answer could.

    Raises:
        GrantError: why it may not be made (`agent_wait.errors.GrantError` codes).
    """
    if not answerer.vouched or answerer.answered_by is None:
        raise GrantError(
            "not_granter",
            "a grant is one person's decision, and this sender does not prove which person answers; grant through "
            "the inbox, the answer API, a link made for you, Slack, or a trusted sender that names you",
        )
    policy = _asked_policy(record.envelope)
    terms = grant_terms(
        request,
        call=wait_call(record.envelope.question, record.envelope.source),
        thread_id=record.thread_id,
        policy=policy,
        answer=answer,
        groups=answerer.groups,
        names=answerer.keys,
    )
    granters = policy.grants  # not None: grant_terms refuses a policy without grants
    return new_grant(
        terms,
        question_id=record.question_id,
        granted_by=answerer.answered_by,
        via=answerer.via,
        now=now,
        subject=answerer.subject,
        groups=answerer.groups,
        granters={"groups": granters.groups, "people": granters.people} if granters is not None else None,
    )


def grant_offers(envelope: WaitEnvelope) -> list[tuple[int, GrantOffer]]:
    """The policy's fixed grant offers (with their index in `Grants.offers`) the question of `envelope` may take
    beside Approve: none for a policy without grants or a question no grant fits, and only offers whose pins the call
    satisfies. The envelope is all it reads, so an announcer and a door (from the row) get the same offers."""
    policy = _asked_policy(envelope)
    grants = policy.grants
    if grants is None:
        return []
    # Whoever answers: the desk checks the person when the answer comes.
    anyone = _AskedPolicy(
        Grants(max_ttl=grants.max_ttl_iso, max_uses=grants.max_uses, scopes=grants.scopes),
        policy.response_schema,
        policy.allowed_actions,
        policy.quorum,
        policy.tags,
    )
    call = wait_call(envelope.question, envelope.source)
    fitting = []
    for index, offer in enumerate(grants.offers):
        try:
            grant_terms(
                offer.request, call=call, thread_id=envelope.thread_id, policy=anyone, answer={"action": APPROVE}
            )
        except GrantError:
            continue
        fitting.append((index, offer))
    return fitting
