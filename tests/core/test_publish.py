"""publish: one envelope to every announcer, concurrently, never raising because of an announcer."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import uuid
from typing import Any

import pytest

from agent_wait import (
    BaseAnnounce,
    InMemoryAnnounce,
    PublishReport,
    Question,
    Transition,
    WaitEnvelope,
    WaitPolicy,
    apublish,
    publish,
)

SECRET = "Zoë Secretname, IBAN DE89370400440532013000"


def make_envelope() -> WaitEnvelope:
    question = Question(
        f"thread-{uuid.uuid4().hex[:8]}",
        f"q-{uuid.uuid4().hex}",
        {"function": "issue_refund", "args": {"customer": SECRET, "amount": 41000}},
        WaitPolicy(timeout="P3D"),
    )
    return WaitEnvelope.create(question)


class BrokenAnnounce(BaseAnnounce):
    name = "broken"

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        raise ConnectionError("backend down")


class BarrierAnnounce(BaseAnnounce):
    """Delivers only when `parties` announcers are inside deliver() at the same time."""

    name = "barrier"

    def __init__(self, barrier: threading.Barrier) -> None:
        super().__init__()
        self.barrier = barrier
        self.thread: str | None = None

    def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
        self.thread = threading.current_thread().name
        self.barrier.wait()  # raises BrokenBarrierError after its timeout unless all four are here at once


def named(name: str) -> InMemoryAnnounce:
    cls = type(f"Memory_{name}", (InMemoryAnnounce,), {"name": name})
    return cls()


# --- delivery -----------------------------------------------------------------------------------


def test_publish_delivers_the_envelope_to_every_announcer():
    # GIVEN three announcers
    announcers = [InMemoryAnnounce(), InMemoryAnnounce(), InMemoryAnnounce()]
    envelope = make_envelope()
    # WHEN one envelope is published
    report = publish(envelope, announcers)
    # THEN each holds it once, and the report says so
    for announcer in announcers:
        assert announcer.events == [(Transition.CREATED, envelope)]
    assert report.ok
    assert report.envelope is envelope
    assert [d.status for d in report.deliveries] == ["delivered"] * 3


def test_publish_accepts_a_single_announcer():
    memory = InMemoryAnnounce()
    report = publish(make_envelope(), memory)
    assert report.delivered == ("memory",)
    assert len(memory.events) == 1


def test_report_lists_deliveries_in_the_order_announcers_were_given():
    announcers = [named("first"), BrokenAnnounce(), named("third")]
    report = publish(make_envelope(), announcers)
    assert [d.announcer for d in report.deliveries] == ["first", "broken", "third"]
    assert report.delivered == ("first", "third")


@pytest.mark.parametrize("announce", [None, [], ()])
def test_no_announcers_gives_an_empty_report(announce: Any):
    envelope = make_envelope()
    report = publish(envelope, announce)
    assert report == PublishReport(envelope, ())
    assert report.ok
    assert report.delivered == ()
    assert report.failed == ()


@pytest.mark.parametrize(
    ("announce", "got"),
    [
        ([InMemoryAnnounce(), "webhook"], "str"),
        ([object()], "object"),
        ("memory", "str"),
        ([InMemoryAnnounce], "ABCMeta"),
    ],
)
def test_a_non_announcer_in_the_list_is_a_type_error(announce: Any, got: str):
    with pytest.raises(TypeError, match=re.escape(f"announce must hold BaseAnnounce instances; got a {got}")):
        publish(make_envelope(), announce)


def test_a_generator_of_announcers_is_accepted():
    memories = [InMemoryAnnounce(), InMemoryAnnounce()]
    report = publish(make_envelope(), (m for m in memories))
    assert len(report.deliveries) == 2
    assert all(len(m.events) == 1 for m in memories)


# --- concurrency --------------------------------------------------------------------------------


def test_announcers_run_at_the_same_time_not_one_after_another():
    # GIVEN four announcers that can only deliver when all four are delivering at once
    barrier = threading.Barrier(4, timeout=5)
    announcers = [BarrierAnnounce(barrier) for _ in range(4)]
    # WHEN one envelope is published to them
    report = publish(make_envelope(), announcers)
    # THEN every one delivered: publish ran them concurrently (one after another, the barrier would break)
    assert report.ok, report.failed
    assert report.delivered == ("barrier",) * 4
    assert len({a.thread for a in announcers}) == 4


def test_publish_returns_only_when_the_slowest_announcer_is_done():
    # GIVEN one slow announcer released only by a fast one
    release = threading.Event()
    finished: list[str] = []

    class Slow(BaseAnnounce):
        name = "slow"

        def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
            assert release.wait(timeout=5)
            finished.append("slow")

    class Fast(BaseAnnounce):
        name = "fast"

        def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
            finished.append("fast")
            release.set()

    # WHEN published / THEN both finished before publish returned
    report = publish(make_envelope(), [Slow(), Fast()])
    assert report.ok
    assert sorted(finished) == ["fast", "slow"]


# --- failures are contained ---------------------------------------------------------------------


def test_a_raising_announcer_never_stops_the_others_or_raises(caplog: pytest.LogCaptureFixture):
    # GIVEN one broken announcer between two working ones
    caplog.set_level(logging.WARNING, logger="agent_wait.channels.announce")
    first, broken, last = InMemoryAnnounce(), BrokenAnnounce(), InMemoryAnnounce()
    envelope = make_envelope()
    # WHEN published
    report = publish(envelope, [first, broken, last])
    # THEN the others delivered, the failure is reported with its reason and counted
    assert len(first.events) == len(last.events) == 1
    assert not report.ok
    assert [(d.announcer, d.status, d.error) for d in report.failed] == [
        ("broken", "failed", "ConnectionError: backend down")
    ]
    assert broken.stats.failed == 1
    assert broken.stats.delivered == 0
    assert first.stats.delivered == 1


def test_a_failure_is_exactly_one_warning_line_with_ids_and_no_question_content(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG, logger="agent_wait.channels.announce")
    envelope = make_envelope()
    publish(envelope, [InMemoryAnnounce(), BrokenAnnounce()])
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    line = warnings[0].getMessage()
    assert warnings[0].levelno == logging.WARNING
    assert warnings[0].name == "agent_wait.channels.announce"
    assert line == (
        f"announce failed: announcer=broken event=wait.created thread_id={envelope.thread_id} "
        f"question_id={envelope.question_id} error=ConnectionError: backend down"
    )
    assert SECRET not in caplog.text
    assert "41000" not in caplog.text


def test_every_announcer_failing_still_returns_a_report():
    report = publish(make_envelope(), [BrokenAnnounce(), BrokenAnnounce()])
    assert [d.status for d in report.deliveries] == ["failed", "failed"]


# --- transitions --------------------------------------------------------------------------------


def test_a_transition_an_announcer_does_not_deliver_is_reported_as_skipped():
    # GIVEN one announcer for created only, one for everything
    created_only, everything = InMemoryAnnounce(delivers={"created"}), InMemoryAnnounce()
    # WHEN a resumed envelope is published
    report = publish(make_envelope().for_transition("resumed"), [created_only, everything])
    # THEN the first skipped it (not a failure), the second delivered it
    assert [d.status for d in report.deliveries] == ["skipped", "delivered"]
    assert report.ok
    assert created_only.events == []
    assert created_only.stats.skipped == 1
    assert everything.of("resumed")


def test_transition_argument_overrides_the_envelope_type():
    memory = InMemoryAnnounce()
    report = publish(make_envelope(), memory, transition="answered")
    assert report.deliveries[0].transition is Transition.ANSWERED
    assert memory.events[0][0] is Transition.ANSWERED


def test_an_unknown_transition_argument_is_refused():
    with pytest.raises(ValueError, match=re.escape("unknown transition 'deleted'")):
        publish(make_envelope(), InMemoryAnnounce(), transition="deleted")


# --- asyncio ------------------------------------------------------------------------------------


def test_apublish_delivers_concurrently_from_asyncio():
    # GIVEN four barrier announcers and a running event loop
    barrier = threading.Barrier(4, timeout=5)
    announcers = [BarrierAnnounce(barrier) for _ in range(4)]
    envelope = make_envelope()

    async def main() -> PublishReport:
        return await apublish(envelope, announcers)

    # WHEN awaited / THEN all four delivered together and the report is the same as publish's
    report = asyncio.run(main())
    assert report.ok, report.failed
    assert report.envelope is envelope
    assert len(report.delivered) == 4


def test_apublish_does_not_block_the_event_loop():
    # GIVEN an announcer that waits for a coroutine on the loop to run
    ran = threading.Event()

    class WaitsForLoop(BaseAnnounce):
        name = "waits"

        def deliver(self, envelope: WaitEnvelope, transition: Transition) -> None:
            if not ran.wait(timeout=5):
                raise TimeoutError("event loop was blocked")

    async def main() -> PublishReport:
        task = asyncio.create_task(apublish(make_envelope(), WaitsForLoop()))
        await asyncio.sleep(0)
        ran.set()
        return await task

    # THEN it delivered: the loop kept running while the announcer worked
    assert asyncio.run(main()).ok


def test_apublish_contains_failures_like_publish():
    report = asyncio.run(apublish(make_envelope(), [BrokenAnnounce(), InMemoryAnnounce()]))
    assert [d.status for d in report.deliveries] == ["failed", "delivered"]


def test_the_publish_function_shadows_no_module_of_its_name() -> None:
    import importlib
    import inspect

    import agent_wait

    assert inspect.isfunction(agent_wait.publish)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("agent_wait.publish")
