"""A thread's history does not make its next lifecycle cost more: the router reads only what is open.

Each delivery records the thread's open question ids in the release of its lease, and the next delivery
reads them back with the lease it takes, so "what is open on this thread" is one read per open question,
never a query of every question the thread ever had. Measured on the emulator: items the router reads
from the question table for one lifecycle (start → ask → answer → resume).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.aws_stack import HostStack, answer_message, start_message

from agent_wait.engine import OutcomeKind, Router
from agent_wait.host import HostSettings, build_router


def _lifecycle(router: Router, thread_id: str, turn: int) -> None:
    started = router.handle(
        json.dumps(start_message(thread_id, f"{thread_id}-{turn}", start_id=f"{thread_id}-s{turn}"))
    )
    (question_id,) = started.asked
    answered = router.handle(json.dumps(answer_message(thread_id, question_id, answer_id=f"{thread_id}-a{turn}")))
    assert answered.kind is OutcomeKind.APPLIED


def _items_read(router: Router, table: str, work: Any) -> int:
    """Items the question table returned (GetItem, Query) while `work` ran."""
    read: list[int] = []

    def count(parsed: dict[str, Any], model: Any, params: dict[str, Any] | None = None, **_: Any) -> None:
        if model.name == "GetItem":
            read.append(1 if parsed.get("Item") else 0)
        elif model.name == "Query":
            read.append(len(parsed.get("Items", [])))

    def remember(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["table"] = params.get("TableName")

    events = router.ledger._client.meta.events  # type: ignore[attr-defined]
    events.register("before-parameter-build.dynamodb", remember)
    events.register("after-call.dynamodb", lambda context, **kw: count(**kw) if context.get("table") == table else None)
    try:
        work()
    finally:
        events.unregister("before-parameter-build.dynamodb", remember)
    return sum(read)


@pytest.mark.usefixtures("host")
def test_a_thread_with_twelve_earlier_turns_reads_no_more_than_a_new_thread(host: HostStack, unique: str) -> None:
    # GIVEN a thread that has been through twelve lifecycles, and a new thread
    router = build_router(HostSettings.from_env("router"))
    old, new = f"old-{unique}", f"new-{unique}"
    for turn in range(12):
        _lifecycle(router, old, turn)

    # WHEN each goes through one more lifecycle
    on_old = _items_read(router, host.table, lambda: _lifecycle(router, old, 12))
    on_new = _items_read(router, host.table, lambda: _lifecycle(router, new, 0))

    # THEN the old thread's lifecycle read no more than the new one's: its history is never read (a new
    # thread's first delivery has no recorded ids yet, so it queries the thread: one item, its new question)
    assert on_old <= on_new, f"{on_old} items read on a thread with 12 turns, {on_new} on a new one"
    assert len(host.ledger().questions(old)) == 13


@pytest.mark.usefixtures("host")
def test_an_answer_reads_the_question_it_decides_once(host: HostStack, unique: str) -> None:
    # GIVEN a thread whose lease records its open question (a turn before this one)
    router = build_router(HostSettings.from_env("router"))
    thread_id = f"t-{unique}"
    _lifecycle(router, thread_id, 0)
    (question_id,) = router.handle(json.dumps(start_message(thread_id, "o-1", start_id=f"{thread_id}-s1"))).asked

    # WHEN its answer is applied
    answer = answer_message(thread_id, question_id, answer_id=f"{thread_id}-a1")
    read = _items_read(router, host.table, lambda: router.handle(json.dumps(answer)))

    # THEN the question's row was read once, to decide it; the run's open questions after the resume leave out
    # the question this delivery decided, which never opens again
    assert read == 1


@pytest.mark.usefixtures("host")
def test_a_start_on_a_new_thread_reads_no_questions(host: HostStack, unique: str) -> None:
    # GIVEN a thread with no state and no lease yet
    router = build_router(HostSettings.from_env("router"))
    thread_id = f"t-{unique}"

    # WHEN its first start runs and asks
    read = _items_read(router, host.table, lambda: router.handle(json.dumps(start_message(thread_id, "o-1"))))

    # THEN the ledger was not queried for the thread's earlier questions (it has none), and the question is open
    assert read == 0
    (record,) = host.ledger().questions(thread_id)
    assert record.status.value == "open"
