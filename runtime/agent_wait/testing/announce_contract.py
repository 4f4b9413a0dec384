"""The announcer conformance suite: one rule per function, each a plain function of a factory.

A backend opts in with a short test file:

    from agent_wait.testing import announce_contract

    @pytest.mark.parametrize("rule", announce_contract.REQUIRED, ids=lambda rule: rule.__name__)
    def test_my_announcer_conforms(rule):
        rule(lambda delivers=None: AnnounceHarness(MyAnnounce(..., delivers=delivers), read_back=...))

`read_back()` returns what the backend holds, as envelope dicts, oldest first. An announcer that turns the
envelope into a message for people (a Slack post, an email, a Teams card, a log line) says so
(`carries_envelope=False`): its `read_back()` returns one item per message the backend took, each with the
`question_id` it is about, and the rules on the envelope's own fields do not apply to it (the channel suite,
`agent_wait.testing.channel_contract`, checks what each of its transitions sends against its preview). Rules
that need a capability a backend does not claim (`break_backend`, `keeps_one_per_key`, `read_item`, `host_write`)
return without asserting; `OPTIONAL` lists them so a backend that claims the capability runs them too.
A backend that keeps one mutable item per question (a ledger row) claims `read_item` and `host_write`
and is held to the ledger's rules: a republish never clobbers what a host wrote, a lifecycle transition
never creates an item, and the first outcome stands.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.channels.publish import publish
from agent_wait.contract.envelope import ENVELOPE_FIELDS, Question, Transition, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = ("FOLLOW_UPS", "OPTIONAL", "REQUIRED", "AnnounceHarness", "AnnouncerFactory", "held_for", "sample_envelope")

ASKED_AT = datetime(2026, 9, 11, 9, 0, tzinfo=UTC)


@dataclass
class AnnounceHarness:
    """An announcer under test and a way to read back what reached its backend."""

    announcer: BaseAnnounce
    read_back: Callable[[], list[dict[str, Any]]]
    """What the backend holds now, as envelope dicts, oldest first."""
    break_backend: Callable[[], None] | None = None
    """Makes the backend fail (delete the queue, stop the server); None when the harness cannot."""
    keeps_one_per_key: bool = False
    """True when the backend holds one item per `dedupe_key` (a row, a FIFO dedup id)."""
    read_item: Callable[[WaitEnvelope], dict[str, Any] | None] | None = None
    """The backend's stored item for the envelope's question, with whatever a host added to it (`status`,
    an outcome), or None when there is none; leave unset when the backend keeps no item per question."""
    host_write: Callable[[WaitEnvelope, Mapping[str, Any]], None] | None = None
    """Writes fields into the question's existing item as a host would (a decided `status`, an outcome)."""
    carries_envelope: bool = True
    """False for an announcer that sends people a message of its own instead of the envelope: `read_back` then
    returns one item per message, each with its `question_id`, and the rules on the envelope's fields skip it."""
    extra: dict[str, Any] = field(default_factory=dict)


class AnnouncerFactory(Protocol):
    def __call__(self, delivers: Iterable[Transition | str] | None = None) -> AnnounceHarness: ...


def sample_envelope(
    *, question: Any = None, policy: WaitPolicy | None = None, thread_id: str | None = None
) -> WaitEnvelope:
    """A fresh envelope with unique ids and every optional field set."""
    policy = policy or WaitPolicy(
        timeout="P3D",
        default={"action": "reject", "reason": "no response within P3D"},
        tags={"approver_group": "finance"},
        correlation={"provider": "stripe", "id": "re_123"},
        answer_ttl="PT15M",
    )
    return WaitEnvelope.create(
        Question(
            thread_id or f"thread-{uuid.uuid4().hex[:12]}",
            f"q-{uuid.uuid4().hex}",
            question if question is not None else {"function": "issue_refund", "args": {"amount": 41000}},
            policy,
            source={"function": "issue_refund"},
            asked_at=ASKED_AT,
        ),
        reply_to={"queue_url": "https://sqs.example/entry.fifo"},
    )


def held_for(harness: AnnounceHarness, envelope: WaitEnvelope) -> list[dict[str, Any]]:
    """What the backend holds for `envelope`'s question, oldest first."""
    return [item for item in harness.read_back() if item.get("question_id") == envelope.question_id]


def _only(harness: AnnounceHarness, envelope: WaitEnvelope, event_type: str) -> dict[str, Any]:
    held = held_for(harness, envelope)
    matching = [item for item in held if item.get("type") == event_type]
    assert matching, f"expected a {event_type} envelope for {envelope.question_id} in the backend, got {held!r}"
    return matching[-1]


def every_contract_field_arrives(make: AnnouncerFactory) -> None:
    """A delivered envelope carries every field of the contract, each with the value it was published with."""
    harness = make()
    if not harness.carries_envelope:
        return
    envelope = sample_envelope()
    report = publish(envelope, harness.announcer)
    assert report.ok, f"expected delivery, got {report.deliveries!r}"
    held = _only(harness, envelope, "wait.created")
    expected = envelope.to_dict()
    for name in ENVELOPE_FIELDS:
        assert held.get(name) == expected[name], f"field {name}: expected {expected[name]!r}, got {held.get(name)!r}"


def floats_falsy_values_and_unicode_survive(make: AnnouncerFactory) -> None:
    """Floats, zero, False, empty strings and lists, nulls and non-ASCII text arrive unchanged."""
    harness = make()
    if not harness.carries_envelope:
        return
    question = {
        "function": "issue_refund",
        "args": {"amount": 410.25, "ratio": 0.1, "zero": 0, "no": False, "empty": "", "none": None, "list": []},
        "note": "Rückerstattung für Zoë — 払い戻し ✓",
        "nested": [{"deep": [1.5, -2, 3e-7]}],
    }
    envelope = sample_envelope(question=question, policy=WaitPolicy(default=False, allowed_actions=["ok"]))
    assert publish(envelope, harness.announcer).ok
    held = _only(harness, envelope, "wait.created")
    assert held["question"] == question, f"question changed in transit: expected {question!r}, got {held['question']!r}"
    assert held["default"] is False, f"default=False must survive, got {held['default']!r}"


def undeclared_transitions_are_skipped(make: AnnouncerFactory) -> None:
    """An announcer built with `delivers={"created"}` skips `resumed` and the backend receives nothing for it."""
    harness = make(delivers={"created"})
    envelope = sample_envelope()
    delivery = harness.announcer.announce(envelope.for_transition("resumed"))
    assert delivery.status == "skipped", f"expected skipped, got {delivery!r}"
    held = held_for(harness, envelope)
    assert held == [], f"expected nothing in the backend for a skipped transition, got {held!r}"


def declared_lifecycle_transitions_arrive(make: AnnouncerFactory) -> None:
    """Each lifecycle transition the announcer delivers arrives with its own type (`wait.<transition>`)."""
    harness = make()
    if not harness.carries_envelope:
        return
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok
    for step in (Transition.ANSWERED, Transition.RESUMED):
        if step in harness.announcer.delivers:
            assert publish(envelope.for_transition(step), harness.announcer).ok
            _only(harness, envelope, step.event_type)


def broken_backend_reports_failure_without_raising(make: AnnouncerFactory) -> None:
    """When the backend fails, `publish` returns a failed delivery with a reason and raises nothing."""
    harness = make()
    if harness.break_backend is None:
        return
    harness.break_backend()
    report = publish(sample_envelope(), harness.announcer)
    assert not report.ok, f"expected a failed delivery from a broken backend, got {report.deliveries!r}"
    failure = report.failed[0]
    assert failure.error, f"a failed delivery must say why, got {failure!r}"
    assert harness.announcer.stats.failed >= 1, "a failure must be counted"


def republish_is_one_item(make: AnnouncerFactory) -> None:
    """A republished question (same dedupe_key, fresh event_id) is one item in a backend keyed on dedupe_key; an
    announcer for people that remembers what it sent sends nothing again."""
    harness = make()
    if not harness.keeps_one_per_key:
        return
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok
    if not harness.carries_envelope:  # a message per person or channel: the republish sends none again
        first = len(held_for(harness, envelope))
        assert publish(envelope.republished(), harness.announcer).ok
        again = len(held_for(harness, envelope))
        assert first >= 1, f"expected a message for {envelope.question_id}, got none"
        assert again == first, f"a republish of {envelope.dedupe_key} sent {again - first} message(s) again"
        return
    assert publish(envelope.republished(), harness.announcer).ok
    created = [item for item in held_for(harness, envelope) if item.get("type") == "wait.created"]
    assert len(created) == 1, f"expected one item for {envelope.dedupe_key}, got {len(created)}"


def republish_never_clobbers_host_status(make: AnnouncerFactory) -> None:
    """A republish never overwrites the status or outcome a host wrote into the item, nor moves `expires_at`."""
    harness = make()
    if harness.read_item is None or harness.host_write is None:
        return
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok
    outcome = {"action": "approve", "by": "host"}
    harness.host_write(envelope, {"status": QuestionStatus.ANSWERED.value, "outcome": outcome})
    later = replace(envelope.republished(), expires_at="2099-01-01T00:00:00Z")
    report = publish(later, harness.announcer)
    assert report.ok, f"a republish of a held question is a successful no-op, got {report.deliveries!r}"
    item = harness.read_item(envelope)
    assert item is not None, f"the item for {envelope.question_id} disappeared"
    assert item.get("status") == "answered", f"status: expected the host's 'answered', got {item.get('status')!r}"
    assert item.get("outcome") == outcome, f"outcome: expected {outcome!r}, got {item.get('outcome')!r}"
    assert item.get("expires_at") == envelope.expires_at, (
        f"expires_at moved: expected {envelope.expires_at!r}, got {item.get('expires_at')!r}"
    )


def lifecycle_transition_never_creates_an_item(make: AnnouncerFactory) -> None:
    """A lifecycle transition for a question the backend never held fails with a reason and creates nothing."""
    harness = make()
    if harness.read_item is None:
        return
    closing = (Transition.ANSWERED, Transition.EXPIRED, Transition.CANCELLED, Transition.RESUMED)
    step = next((t for t in closing if t in harness.announcer.delivers), None)
    if step is None:
        return
    envelope = sample_envelope()
    report = publish(envelope.for_transition(step), harness.announcer)
    assert not report.ok, f"{step.event_type} for an unknown question must fail, got {report.deliveries!r}"
    assert report.failed[0].error, f"the failure must say why, got {report.failed[0]!r}"
    item = harness.read_item(envelope)
    assert item is None, f"{step.event_type} created a phantom item: {item!r}"


def first_outcome_stands(make: AnnouncerFactory) -> None:
    """`status` is `open`, then the first outcome; a different later outcome changes nothing; `resumed` ends it."""
    harness = make()
    steps = {Transition.CREATED, Transition.ANSWERED, Transition.EXPIRED, Transition.RESUMED}
    read_item = harness.read_item
    if read_item is None or not steps <= harness.announcer.delivers:
        return
    envelope = sample_envelope()

    def status_after(step: Transition) -> Any:
        report = publish(envelope.for_transition(step), harness.announcer)
        assert report.ok, f"{step.event_type} must deliver (a stale outcome is a no-op), got {report.deliveries!r}"
        item = read_item(envelope)
        assert item is not None, f"no item for {envelope.question_id} after {step.event_type}"
        return item.get("status")

    assert status_after(Transition.CREATED) == "open"
    assert status_after(Transition.ANSWERED) == "answered"
    got = status_after(Transition.EXPIRED)
    assert got == "answered", f"wait.expired after wait.answered must keep 'answered', got {got!r}"
    assert status_after(Transition.RESUMED) == "resumed"


FOLLOW_UPS: tuple[tuple[Transition, dict[str, Any]], ...] = (
    (Transition.REMINDER, {"reminder": 1, "of": 2}),
    (Transition.ESCALATED, {"escalation": 1, "of": 1}),
    (Transition.VOTED, {"votes": [{"action": "approve", "by": "ana", "at": "2026-09-11T10:00:00Z"}], "needed": 2}),
    (Transition.EXTENDED, {"extension": 1, "from": "2026-09-14T09:00:00Z", "to": "2026-09-15T09:00:00Z", "by": "ana"}),
)
"""A reminder, an escalation step, a vote and an extension, each with the `progress` its envelope carries."""


def follow_ups_never_change_the_status(make: AnnouncerFactory) -> None:
    """A reminder, an escalation step or a vote leaves an open item open, and changes nothing on a decided one."""
    harness = make()
    read_item, host_write = harness.read_item, harness.host_write
    steps = {Transition.CREATED} | {step for step, _ in FOLLOW_UPS}
    if read_item is None or host_write is None or not steps <= harness.announcer.delivers:
        return
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok
    for step, progress in FOLLOW_UPS:
        report = publish(envelope.for_transition(step, progress=progress), harness.announcer)
        assert report.ok, f"{step.event_type} for an open question must deliver, got {report.deliveries!r}"
        item = read_item(envelope)
        assert item is not None, f"no item for {envelope.question_id} after {step.event_type}"
        assert item.get("status") == "open", f"{step.event_type} must leave the status open, got {item.get('status')!r}"
    host_write(envelope, {"status": QuestionStatus.ANSWERED.value})
    for step, progress in FOLLOW_UPS:
        report = publish(envelope.for_transition(step, progress=progress), harness.announcer)
        assert report.ok, f"a late {step.event_type} is a successful no-op, got {report.deliveries!r}"
        item = read_item(envelope)
        assert item is not None, f"the item for {envelope.question_id} disappeared"
        assert item.get("status") == "answered", (
            f"a late {step.event_type} must keep the decided status, got {item.get('status')!r}"
        )


REQUIRED: tuple[Callable[[AnnouncerFactory], None], ...] = (
    every_contract_field_arrives,
    floats_falsy_values_and_unicode_survive,
    undeclared_transitions_are_skipped,
    declared_lifecycle_transitions_arrive,
)
"""Every announcer passes these."""

OPTIONAL: tuple[Callable[[AnnouncerFactory], None], ...] = (
    broken_backend_reports_failure_without_raising,
    republish_is_one_item,
    republish_never_clobbers_host_status,
    lifecycle_transition_never_creates_an_item,
    first_outcome_stands,
    follow_ups_never_change_the_status,
)
"""Rules for capabilities a harness declares; they return without asserting otherwise."""
