"""InMemoryAnnounce: .events, .of(transition), .last(), .clear()."""

from __future__ import annotations

import threading

from agent_wait import InMemoryAnnounce, Question, Transition, WaitEnvelope, publish


def make_envelope(qid: str = "q-1") -> WaitEnvelope:
    return WaitEnvelope.create(Question("t-1", qid, {"function": "f", "args": {}}))


def test_starts_empty():
    memory = InMemoryAnnounce()
    assert memory.events == []
    assert memory.last() is None
    assert memory.of("created") == []


def test_events_hold_transition_and_envelope_pairs_in_order():
    # GIVEN a created and an answered envelope
    memory = InMemoryAnnounce()
    created = make_envelope()
    answered = created.for_transition("answered")
    # WHEN both are published
    publish(created, memory)
    publish(answered, memory)
    # THEN events holds both, oldest first, with their transitions
    assert memory.events == [(Transition.CREATED, created), (Transition.ANSWERED, answered)]


def test_of_filters_by_transition_accepting_names_event_types_and_enums():
    memory = InMemoryAnnounce()
    a, b = make_envelope("q-a"), make_envelope("q-b")
    publish(a, memory)
    publish(a.for_transition("answered"), memory)
    publish(b, memory)
    assert memory.of("created") == [a, b]
    assert memory.of("wait.created") == [a, b]
    assert memory.of(Transition.CREATED) == [a, b]
    assert [e.question_id for e in memory.of("answered")] == ["q-a"]
    assert memory.of("expired") == []


def test_last_is_the_most_recent_envelope():
    memory = InMemoryAnnounce()
    first, second = make_envelope("q-1"), make_envelope("q-2")
    publish(first, memory)
    publish(second, memory)
    assert memory.last() is second


def test_clear_forgets_everything():
    memory = InMemoryAnnounce()
    publish(make_envelope(), memory)
    memory.clear()
    assert memory.events == []
    assert memory.last() is None


def test_delivers_filter_keeps_only_declared_transitions():
    memory = InMemoryAnnounce(delivers={"created"})
    envelope = make_envelope()
    publish(envelope, memory)
    publish(envelope.for_transition("resumed"), memory)
    assert memory.events == [(Transition.CREATED, envelope)]


def test_concurrent_deliveries_are_all_kept():
    memory = InMemoryAnnounce()
    envelopes = [make_envelope(f"q-{i}") for i in range(200)]
    threads = [threading.Thread(target=memory.announce, args=(e,)) for e in envelopes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(e.question_id for _, e in memory.events) == sorted(e.question_id for e in envelopes)
    assert memory.stats.delivered == 200
