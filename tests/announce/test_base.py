"""BaseAnnounce: deliver() may raise; announce() turns that into a failed Delivery, a count and one log line."""

from __future__ import annotations

import logging
import re

import pytest

from agent_wait import BaseAnnounce, Delivery, EnvelopeError, Question, Transition, WaitEnvelope
from agent_wait.channels.announce import ALL_TRANSITIONS

PERSONAL = "Zoë Secretname"


def make_envelope() -> WaitEnvelope:
    return WaitEnvelope.create(Question("t-1", "q-1", {"function": "f", "args": {"who": PERSONAL}}))


class Recording(BaseAnnounce):
    name = "recording"

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.calls: list[tuple[str, Transition]] = []

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        self.calls.append((envelope.question_id, transition))


class Failing(BaseAnnounce):
    name = "failing"

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        raise RuntimeError("queue does not exist")


def test_a_subclass_writes_only_deliver():
    recording = Recording()
    delivery = recording.announce(make_envelope())
    assert recording.calls == [("q-1", Transition.CREATED)]
    assert delivery.announcer == "recording"
    assert delivery.transition is Transition.CREATED
    assert delivery.status == "delivered"
    assert delivery.error is None
    assert delivery.ok
    assert delivery.seconds >= 0
    assert recording.stats.delivered == 1


def test_base_announce_cannot_be_used_without_deliver():
    with pytest.raises(TypeError, match="abstract"):
        BaseAnnounce()  # type: ignore[abstract]


def test_an_exception_in_deliver_is_a_failed_delivery_never_raised(caplog: pytest.LogCaptureFixture):
    # GIVEN an announcer whose backend raises
    caplog.set_level(logging.DEBUG, logger="agent_wait")
    failing = Failing()
    # WHEN it announces
    delivery = failing.announce(make_envelope())
    # THEN a failed Delivery with the reason, one counted failure and one WARNING line with ids only
    assert delivery == Delivery(
        "failing", Transition.CREATED, "failed", "RuntimeError: queue does not exist", delivery.seconds
    )
    assert not delivery.ok
    assert (failing.stats.delivered, failing.stats.failed, failing.stats.skipped) == (0, 1, 0)
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert "question_id=q-1" in record.getMessage()
    assert "thread_id=t-1" in record.getMessage()
    assert PERSONAL not in caplog.text


def test_failures_are_counted_each_time():
    failing = Failing()
    for _ in range(3):
        failing.announce(make_envelope())
    assert failing.stats.failed == 3


def test_base_exceptions_such_as_keyboard_interrupt_are_not_swallowed():
    class Interrupted(BaseAnnounce):
        def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Interrupted().announce(make_envelope())


def test_delivers_every_transition_by_default():
    assert Recording().delivers == ALL_TRANSITIONS == frozenset(Transition)


def test_delivers_filter_skips_other_transitions_and_counts_them():
    # GIVEN an announcer for created and answered only
    recording = Recording(delivers=["created", "wait.answered"])
    envelope = make_envelope()
    # WHEN every transition is announced
    statuses = {
        t.value: recording.announce(envelope.for_transition(t, progress={"reminder": 1} if t.repeats else None)).status
        for t in Transition
    }
    # THEN only the declared ones reached deliver(); the rest are skipped, not failed
    assert statuses == {
        "created": "delivered",
        "answered": "delivered",
        "expired": "skipped",
        "cancelled": "skipped",
        "resumed": "skipped",
        "failed": "skipped",
        "reminder": "skipped",
        "escalated": "skipped",
        "voted": "skipped",
        "extended": "skipped",
    }
    assert [t for _, t in recording.calls] == [Transition.CREATED, Transition.ANSWERED]
    assert (recording.stats.delivered, recording.stats.skipped) == (2, 8)


def test_a_skipped_delivery_is_ok():
    delivery = Recording(delivers={"created"}).announce(make_envelope(), "resumed")
    assert delivery == Delivery("recording", Transition.RESUMED, "skipped")
    assert delivery.ok


def test_an_unknown_transition_in_delivers_is_refused_at_construction():
    with pytest.raises(EnvelopeError, match=re.escape("unknown transition 'approved'; expected one of: created")):
        Recording(delivers={"created", "approved"})


def test_announce_takes_the_transition_from_the_envelope_unless_given():
    recording = Recording()
    envelope = make_envelope().for_transition("expired")
    recording.announce(envelope)
    recording.announce(envelope, Transition.CANCELLED)
    assert [t for _, t in recording.calls] == [Transition.EXPIRED, Transition.CANCELLED]


def test_repr_names_the_class_and_announcer():
    assert repr(Recording()) == "Recording(name='recording')"
