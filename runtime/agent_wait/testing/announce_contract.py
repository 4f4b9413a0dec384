"""The announcer conformance suite: one rule per function, each a plain function of a factory.

A backend opts in with a short test file:

    from agent_wait.testing import announce_contract

    @pytest.mark.parametrize("rule", announce_contract.REQUIRED, ids=lambda rule: rule.__name__)
    def test_my_announcer_conforms(rule):
        rule(lambda delivers=None: AnnounceHarness(MyAnnounce(..., delivers=delivers), read_back=...))

`read_back()` returns what the backend holds, as envelope dicts, oldest first. Rules that need a
capability a backend does not claim (`break_backend`, `keeps_one_per_key`) return without asserting;
`OPTIONAL` lists them so a backend that claims the capability runs them too.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from agent_wait.announce.base import BaseAnnounce
from agent_wait.envelope import ENVELOPE_FIELDS, Question, Transition, WaitEnvelope
from agent_wait.policy import WaitPolicy
from agent_wait.publish import publish

__all__ = ("OPTIONAL", "REQUIRED", "AnnounceHarness", "AnnouncerFactory", "sample_envelope")

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


def _only(harness: AnnounceHarness, envelope: WaitEnvelope, event_type: str) -> dict[str, Any]:
    held = [item for item in harness.read_back() if item.get("question_id") == envelope.question_id]
    matching = [item for item in held if item.get("type") == event_type]
    assert matching, f"expected a {event_type} envelope for {envelope.question_id} in the backend, got {held!r}"
    return matching[-1]


def every_contract_field_arrives(make: AnnouncerFactory) -> None:
    """A delivered envelope carries every field of the contract, each with the value it was published with."""
    harness = make()
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
    held = [item for item in harness.read_back() if item.get("question_id") == envelope.question_id]
    assert held == [], f"expected nothing in the backend for a skipped transition, got {held!r}"


def declared_lifecycle_transitions_arrive(make: AnnouncerFactory) -> None:
    """Each lifecycle transition the announcer delivers arrives with its own type (`wait.<transition>`)."""
    harness = make()
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
    """A republished question (same dedupe_key, fresh event_id) is one item in a backend keyed on dedupe_key."""
    harness = make()
    if not harness.keeps_one_per_key:
        return
    envelope = sample_envelope()
    assert publish(envelope, harness.announcer).ok
    assert publish(envelope.republished(), harness.announcer).ok
    created = [
        item
        for item in harness.read_back()
        if item.get("question_id") == envelope.question_id and item.get("type") == "wait.created"
    ]
    assert len(created) == 1, f"expected one item for {envelope.dedupe_key}, got {len(created)}"


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
)
"""Rules for capabilities a harness declares; they return without asserting otherwise."""
