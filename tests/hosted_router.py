"""A `Router` in memory around any `AgentAdapter`, for the Pydantic AI and Strands host tests.

The same rig drives both frameworks through the scenarios the LangGraph host passes (start, answer,
reject, expire, duplicate, race, redelivered start): the in-memory ledger, dead letters, announcer
and metrics, a clock the test moves, and the sweep sending deadline answers through an in-memory
entry queue that the rig then delivers, as Lambda would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_wait import InMemoryAnnounce
from agent_wait.asking.adapter import AgentAdapter
from agent_wait.engine import InMemoryDeadLetter, InMemoryEntryQueue, Outcome, RecordingMetrics, Router, Sweep
from agent_wait.ledger import InMemoryLedger, QuestionRecord

T0 = datetime(2026, 9, 11, 9, 0, 0, tzinfo=UTC)
"""When every rig's clock starts; questions are asked at this time."""

APPROVE = {"action": "approve"}
REJECT = {"action": "reject", "reason": "over budget"}


@dataclass
class RouterRig:
    """One agent adapter behind routers that share one in-memory ledger, dead-letter queue and announcer."""

    adapter: AgentAdapter
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    dead_letter: InMemoryDeadLetter = field(default_factory=InMemoryDeadLetter)
    announced: InMemoryAnnounce = field(default_factory=InMemoryAnnounce)
    metrics: RecordingMetrics = field(default_factory=RecordingMetrics)
    now: datetime = T0

    def router(self) -> Router:
        """A fresh Router (as a separate Lambda instance would be) over the shared stores."""
        return Router(
            self.adapter,
            self.ledger,
            dead_letter=self.dead_letter,
            announce=[self.announced],
            metrics=self.metrics,
            clock=lambda: self.now,
        )

    def handle(self, message: dict[str, Any], *, message_id: str | None = None) -> Outcome:
        return self.router().handle(json.dumps(message), message_id=message_id)

    def start(self, thread_id: str, value: Any = "refund it", *, start_id: str | None = None) -> Outcome:
        message: dict[str, Any] = {"thread_id": thread_id, "input": value}
        if start_id is not None:
            message["start_id"] = start_id
        return self.handle(message)

    def answer(self, thread_id: str, question_id: str, answer: Any, **fields: Any) -> Outcome:
        return self.handle({"thread_id": thread_id, "question_id": question_id, "answer": answer, **fields})

    def race(self, thread_id: str, question_id: str, answers: Sequence[Any]) -> list[Outcome]:
        """Deliver `answers` at the same moment, each through its own Router, from its own thread."""
        barrier = threading.Barrier(len(answers))
        outcomes: list[Outcome | BaseException | None] = [None] * len(answers)

        def deliver(index: int, answer: Any) -> None:
            router = self.router()
            body = json.dumps({"thread_id": thread_id, "question_id": question_id, "answer": answer})
            barrier.wait()
            try:
                outcomes[index] = router.handle(body, message_id=f"race-{index}")
            except BaseException as exc:  # surfaced below, with the thread's own traceback
                outcomes[index] = exc

        workers = [threading.Thread(target=deliver, args=(i, a)) for i, a in enumerate(answers)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        return [outcome for outcome in outcomes if isinstance(outcome, Outcome)]

    def sweep(self, *, after: timedelta) -> list[Outcome]:
        """Move the clock `after` past T0, run the sweep, and deliver the deadline answers it sent."""
        self.now = T0 + after
        queue = InMemoryEntryQueue()
        Sweep(self.ledger, queue, announce=[self.announced], metrics=self.metrics, clock=lambda: self.now).run()
        return [
            self.router().handle(json.dumps(message), deduplication_id=dedupe) for message, _, dedupe in queue.messages
        ]

    def record(self, thread_id: str, question_id: str) -> QuestionRecord:
        record = self.ledger.get(thread_id, question_id)
        assert record is not None, f"no ledger row for {question_id}"
        return record

    def transitions(self, question_id: str) -> list[str]:
        """The lifecycle types announced for one question, in order."""
        events = self.announced.events
        return [transition.value for transition, envelope in events if envelope.question_id == question_id]


def router_on_moto(endpoint: str, unique: str, graph: str, monkeypatch: Any) -> tuple[Router, Any]:
    """`build_router` from the settings a Lambda reads, on moto, with `AGENT_WAIT_GRAPH=graph`.

    Fresh question and checkpoint tables and a DLQ, named with `unique`. Returns (router, DynamoDB client).
    """
    import boto3
    from tests.support.aws_stack import create_checkpoint_table, create_question_table

    from agent_wait.contract.schema import Settings
    from agent_wait.host import HostSettings, build_router

    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    session = boto3.Session(region_name="us-east-1")
    dynamodb, sqs = session.client("dynamodb"), session.client("sqs")
    create_question_table(dynamodb, f"questions-{unique}")
    create_checkpoint_table(dynamodb, f"checkpoints-{unique}")
    dlq = sqs.create_queue(QueueName=f"dlq-{unique}.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    environment = {
        Settings.GRAPH.value: graph,
        Settings.TABLE.value: f"questions-{unique}",
        Settings.CHECKPOINT_TABLE.value: f"checkpoints-{unique}",
        Settings.DLQ_URL.value: dlq,
    }
    return build_router(HostSettings.from_env("router", environment), session=session), dynamodb
