"""`WaitPublisher(LangGraphAdapter(graph), announce=...)`: the host helpers for servers and workers that
are not the bundled router. Real graphs on InMemorySaver; announcements read from InMemoryAnnounce."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver

from agent_wait import InMemoryAnnounce
from agent_wait.common.times import clock_scope, format_rfc3339
from agent_wait.langgraph import LangGraphAdapter, WaitPublisher

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)


def _publisher(build: object) -> tuple[WaitPublisher, InMemoryAnnounce]:
    memory = InMemoryAnnounce()
    graph = build(InMemorySaver())  # type: ignore[operator]
    return WaitPublisher(LangGraphAdapter(graph), announce=[memory], reply_to={"queue_url": "q"}), memory


def _types(memory: InMemoryAnnounce) -> list[tuple[str, str]]:
    return [(t.value, e.question_id) for t, e in memory.events]


def test_invoke_publishes_created_for_each_new_question(unique: str) -> None:
    # GIVEN a publisher over the graph that asks two questions at once
    publisher, memory = _publisher(graphs.build_parallel_graph)

    # WHEN a run starts
    publisher.invoke({"order_id": f"o-{unique}", "amount": 900}, f"t-{unique}")

    # THEN one wait.created per question, each with reply_to
    pending = publisher.pending(f"t-{unique}")
    assert len(pending) == 2
    assert sorted(_types(memory)) == sorted(("created", q.question_id) for q in pending)
    assert all(e.reply_to == {"queue_url": "q"} for _, e in memory.events)


def test_invoke_with_an_answer_resumes_and_announces_resumed_for_the_question_moved_past(unique: str) -> None:
    # GIVEN a thread parked on the first of two questions asked in sequence
    publisher, memory = _publisher(graphs.build_two_step_graph)
    thread_id, order_id = f"t-{unique}", f"o-{unique}"
    publisher.invoke({"order_id": order_id, "amount": 900}, thread_id)
    (first,) = publisher.pending(thread_id)
    memory.clear()

    # WHEN the answer message is handed to invoke
    publisher.invoke({"question_id": first.question_id, "answer": {"action": "approve"}}, thread_id)

    # THEN the graph resumed (the refund ran), the first question is announced resumed, the second created
    (second,) = publisher.pending(thread_id)
    assert graphs.refunds_paid(order_id) == 1
    assert _types(memory) == [("created", second.question_id), ("resumed", first.question_id)]
    assert second.value["function"] == "close_case"


def test_pending_lists_only_the_questions_the_graph_is_still_parked_on(unique: str) -> None:
    # GIVEN two questions open at once
    publisher, memory = _publisher(graphs.build_parallel_graph)
    thread_id = f"t-{unique}"
    publisher.invoke({"order_id": f"o-{unique}", "amount": 900}, thread_id)
    first, second = publisher.pending(thread_id)
    memory.clear()

    # WHEN one is answered
    publisher.invoke({"question_id": first.question_id, "answer": {"action": "approve"}}, thread_id)

    # THEN only the other is pending, it is not announced again, and the answered one is resumed
    assert [q.question_id for q in publisher.pending(thread_id)] == [second.question_id]
    assert _types(memory) == [("resumed", first.question_id)]

    # WHEN the other is answered too, nothing is pending
    publisher.invoke({"question_id": second.question_id, "answer": {"action": "reject"}}, thread_id)
    assert publisher.pending(thread_id) == []
    assert _types(memory)[-1] == ("resumed", second.question_id)


def test_republish_keeps_the_deadline_of_the_first_ask(unique: str) -> None:
    # GIVEN a question asked at T0 with a P3D timeout
    publisher, memory = _publisher(graphs.build_graph)
    thread_id = f"t-{unique}"
    with clock_scope(lambda: T0):
        publisher.invoke({"order_id": f"o-{unique}", "amount": 900}, thread_id, now=T0)
    (created,) = memory.of("created")

    # WHEN it is republished two days later
    reports = publisher.republish(thread_id, now=T0 + timedelta(days=2))

    # THEN the republished envelope keeps expires_at and dedupe_key, with a fresh event_id
    (report,) = reports
    assert report.ok
    again = report.envelope
    assert again.expires_at == created.expires_at == format_rfc3339(T0 + timedelta(days=3))
    assert again.dedupe_key == created.dedupe_key
    assert again.event_id != created.event_id


def test_republish_of_a_finished_thread_publishes_nothing(unique: str) -> None:
    publisher, memory = _publisher(graphs.build_graph)
    publisher.invoke({"order_id": f"o-{unique}", "amount": 100}, f"t-{unique}")
    assert publisher.republish(f"t-{unique}") == []
    assert memory.events == []
