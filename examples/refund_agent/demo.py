"""`agent-wait demo`: every refund scenario on the embedded emulator, narrated for a person.

Each scenario drives the real router and sweep handlers through the entry queue, then checks what a
person would check: what was asked, where it was announced, what was answered, the outcome, and how
many times the refund ran. The exit status is non-zero if any outcome is wrong.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TextIO

from agent_wait.cli._dev import Observer
from agent_wait.cli._progress import progress
from agent_wait.common.times import utc_now
from agent_wait.contract.schema import Settings
from agent_wait.engine.outcomes import Outcome, OutcomeKind
from agent_wait.local.stack import EmulatedStack

from .graph import AUTO_APPROVE_LIMIT, FINANCE, REFUND_TABLE_VARIABLE

__all__ = ("SCENARIOS", "World", "run")

LARGE = 900
SMALL = 200


class MovableClock:
    """Real time plus an offset the demo moves forward to let a reminder, an escalation step or a deadline fall due."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return utc_now() + self.offset


def count_refunds(local: EmulatedStack, order_id: str) -> int:
    """How many times the refund ran for `order_id`: one row per execution in the stack's refunds table."""
    response = local.client("dynamodb").query(
        TableName=local.environment[REFUND_TABLE_VARIABLE],
        KeyConditionExpression="order_id = :o",
        ExpressionAttributeValues={":o": {"S": order_id}},
        Select="COUNT",
    )
    return int(response["Count"])


@dataclass
class World:
    """The running stack and what the scenarios need to see into it."""

    local: EmulatedStack
    clock: MovableClock
    observer: Observer
    out: TextIO
    checks: list[tuple[str, bool]] = field(default_factory=list)

    def say(self, text: str) -> None:
        self.out.write(f"   {text}\n")
        self.out.flush()

    def check(self, description: str, ok: bool) -> None:
        self.checks.append((description, ok))
        self.say(f"{'ok ' if ok else 'WRONG'} {description}")

    def announced(self, thread: str | None = None) -> list[dict[str, Any]]:
        """Say, and return, what the SNS topic delivered since the last look (said: only `thread`'s, when given)."""
        envelopes = self.observer.drain()
        for envelope in envelopes:
            if thread is not None and envelope.get("thread_id") != thread:
                continue
            tags = ", ".join(f"{k}={v}" for k, v in (envelope.get("tags") or {}).items())
            self.say(f"announced {envelope['type']} on the SNS topic" + (f" ({tags})" if tags else ""))
        return envelopes

    def pump(self, thread: str | None = None) -> list[Outcome]:
        """Run the router on what the entry queue holds; say what it did (only for `thread`, when given: a sweep
        also decides the questions earlier scenarios left open, which this scenario is not about)."""
        outcomes = self.local.pump().outcomes
        self.announced(thread)
        others = 0
        for outcome in outcomes:
            if thread is None or outcome.thread_id == thread:
                self.say(f"router: {describe(outcome)}")
            else:
                others += 1
        if others:
            self.say(f"(and {others} answer(s) for questions earlier scenarios left open)")
        return outcomes

    def start(self, thread: str, amount: int, *, start_id: str | None = None) -> list[Outcome]:
        self.say(f"start: refund order {thread} for {amount} (auto-approve limit {AUTO_APPROVE_LIMIT})")
        message = {
            "thread_id": thread,
            "input": {"order_id": thread, "amount": amount},
            "start_id": start_id or uuid.uuid4().hex,
        }
        self.local.send(message, deduplication_id=uuid.uuid4().hex)
        return self.pump()

    def answer(
        self,
        thread: str,
        question_id: str,
        action: str,
        *,
        answer_id: str | None = None,
        pump: bool = True,
        by: str = "finance@example.com",
    ) -> list[Outcome]:
        self.say(f"{by.partition('@')[0]} answers {action!r}")
        message: dict[str, Any] = {
            "thread_id": thread,
            "question_id": question_id,
            "answer": {"action": action, "note": "checked by the demo"},
            "answered_by": by,
        }
        if answer_id:
            message["answer_id"] = answer_id
        self.local.send(message, deduplication_id=uuid.uuid4().hex)
        return self.pump() if pump else []

    def row(self, thread: str, question_id: str) -> dict[str, Any]:
        from agent_wait.aws.items import from_item
        from agent_wait.contract.schema import question_key, thread_key

        item = self.local.client("dynamodb").get_item(
            TableName=self.local.table, Key={"pk": {"S": thread_key(thread)}, "sk": {"S": question_key(question_id)}}
        )
        return from_item(item.get("Item", {}))

    def refunds(self, order_id: str) -> int:
        count = count_refunds(self.local, order_id)
        self.say(f"the refund ran {count} time{'s' if count != 1 else ''}")
        return count

    def question_of(self, outcomes: list[Outcome]) -> str:
        asked = [q for outcome in outcomes for q in outcome.asked]
        if not asked:
            raise AssertionError("expected the agent to ask finance, but it asked nothing")
        return asked[-1]


def describe(outcome: Outcome) -> str:
    if outcome.kind is OutcomeKind.REFUSED:
        return f"refused ({outcome.reason}): {outcome.detail}"
    if outcome.kind is OutcomeKind.STARTED:
        return "ran the agent; " + (
            f"it now waits on {len(outcome.asked)} question(s)" if outcome.asked else "it finished"
        )
    if outcome.kind is OutcomeKind.START_REPLAYED:
        return "start already applied: the agent did not run again; open questions republished"
    if outcome.kind is OutcomeKind.APPLIED:
        return "answer won the question; the agent resumed"
    return f"{outcome.kind.value} ({outcome.reason})"


def _kinds(outcomes: list[Outcome]) -> list[str]:
    return [
        outcome.kind.value if outcome.kind is not OutcomeKind.REFUSED else f"refused:{outcome.reason}"
        for outcome in outcomes
    ]


# -- the scenarios ------------------------------------------------------------------------------------


def auto_approve(world: World, thread: str) -> None:
    outcomes = world.start(thread, SMALL)
    world.check("nothing was asked (under the limit, approved by policy)", not any(o.asked for o in outcomes))
    world.check("the refund ran exactly once", world.refunds(thread) == 1)


def approve_over_limit(world: World, thread: str) -> None:
    question = world.question_of(world.start(thread, LARGE))
    world.check(
        "the ledger row is open with finance's tag", world.row(thread, question).get("tags") == dict(FINANCE.tags)
    )
    world.check("the answer was applied", _kinds(world.answer(thread, question, "approve")) == ["applied"])
    row = world.row(thread, question)
    world.check("the row says answered, then resumed", (row["status"], row["outcome"]) == ("resumed", "answered"))
    world.check("the refund ran exactly once", world.refunds(thread) == 1)


def reject(world: World, thread: str) -> None:
    question = world.question_of(world.start(thread, LARGE))
    world.answer(thread, question, "reject")
    world.check("the row says answered with reject", world.row(thread, question)["answer"]["action"] == "reject")
    world.check("the refund never ran", world.refunds(thread) == 0)


def _expire(world: World, thread: str) -> str:
    question = world.question_of(world.start(thread, LARGE))
    world.clock.offset += timedelta(days=3, minutes=1)
    world.say("nobody answers; three days pass (the demo moves its clock)")
    report = world.local.sweep()
    sent = question in report["expired_sent"]
    world.say(f"sweep: {'sent the default' if sent else 'sent no default'} for this order's question")
    world.pump(thread)
    return question


def nobody_answers(world: World, thread: str) -> None:
    question = _expire(world, thread)
    row = world.row(thread, question)
    world.check(
        "the row says expired, decided by the deadline",
        (row["outcome"], row["answered_by"]) == ("expired", "agent-wait:deadline"),
    )
    world.check("the policy default (reject) was applied", row["answer"] == FINANCE.default)
    world.check("the refund never ran", world.refunds(thread) == 0)


def remind_then_escalate(world: World, thread: str) -> None:
    question = world.question_of(world.start(thread, LARGE))
    world.clock.offset += timedelta(hours=4)
    world.say("nobody answers; four hours pass (the demo moves its clock)")
    report = world.local.sweep()
    reminded = question in report["reminded"]
    world.say(f"sweep: {'sent a reminder' if reminded else 'sent no reminder'} for this order's question")
    reminders = [e for e in world.announced(thread) if e["type"] == "wait.reminder" and e["question_id"] == question]
    world.check(
        "a reminder went out to finance (wait.reminder, 1 of 1)",
        [(e["tags"], e["progress"]) for e in reminders] == [(dict(FINANCE.tags), {"reminder": 1, "of": 1})],
    )
    world.clock.offset += timedelta(hours=44)
    world.say("still nobody; two days after asking")
    report = world.local.sweep()
    world.say(f"sweep: {'escalated' if question in report['escalated'] else 'did not escalate'} this order's question")
    steps = [e for e in world.announced(thread) if e["type"] == "wait.escalated" and e["question_id"] == question]
    world.check(
        "the question was escalated to finance-managers (wait.escalated, step 1 of 1)",
        [(e["tags"].get("approver_group"), e["progress"].get("escalation")) for e in steps]
        == [("finance-managers", 1)],
    )
    outcomes = world.answer(thread, question, "approve", by="finance-manager@example.com")
    world.check("the manager's approval was applied", _kinds(outcomes) == ["applied"])
    row = world.row(thread, question)
    world.check(
        "the row says answered by the manager, then resumed",
        (row["status"], row["outcome"], row["answered_by"]) == ("resumed", "answered", "finance-manager@example.com"),
    )
    world.check("the refund ran exactly once", world.refunds(thread) == 1)


def same_answer_twice(world: World, thread: str) -> None:
    question = world.question_of(world.start(thread, LARGE))
    first = world.answer(thread, question, "approve", answer_id="answer-1")
    again = world.answer(thread, question, "approve", answer_id="answer-1")
    world.check(
        "the first delivery applied, the second was a duplicate",
        _kinds(first + again) == ["applied", "refused:duplicate"],
    )
    world.check("the refund ran exactly once", world.refunds(thread) == 1)


def two_answers_race(world: World, thread: str) -> None:
    question = world.question_of(world.start(thread, LARGE))
    world.answer(thread, question, "approve", pump=False)
    world.answer(thread, question, "reject", pump=False)
    outcomes = world.pump()
    world.check(
        "exactly one answer won; the other was refused", _kinds(outcomes) == ["applied", "refused:already_decided"]
    )
    world.check("the refund ran exactly once", world.refunds(thread) == 1)


def start_redelivered(world: World, thread: str) -> None:
    start_id = uuid.uuid4().hex
    question = world.question_of(world.start(thread, LARGE, start_id=start_id))
    world.say("SQS delivers the same start again")
    outcomes = world.start(thread, LARGE, start_id=start_id)
    world.check("the agent did not run again; the question was republished", _kinds(outcomes) == ["start_replayed"])
    world.check("still one open question, the same one", [o.asked for o in outcomes] == [(question,)])
    world.check("the refund has not run", world.refunds(thread) == 0)


def late_approve(world: World, thread: str) -> None:
    question = _expire(world, thread)
    outcomes = world.answer(thread, question, "approve")
    world.check("the late approve was refused as expired", _kinds(outcomes) == ["refused:expired"])
    world.check("the refund never ran", world.refunds(thread) == 0)


def unknown_question(world: World, thread: str) -> None:
    world.start(thread, SMALL)
    outcomes = world.answer(thread, "no-such-question", "approve")
    world.check("an answer for an unknown question was refused", _kinds(outcomes) == ["refused:unknown_question"])
    world.check("the refund ran once, for the start only", world.refunds(thread) == 1)


@contextmanager
def _router_runs(world: World, graph: str) -> Iterator[None]:
    """Point the stack's router at another graph, as a redeploy would, and back afterwards."""
    before = os.environ.get(Settings.GRAPH.value)
    os.environ[Settings.GRAPH.value] = graph
    world.local.cold_start()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(Settings.GRAPH.value, None)
        else:
            os.environ[Settings.GRAPH.value] = before
        world.local.cold_start()


def middleware(world: World, thread: str) -> None:
    try:
        from .support_agent import SUPPORT_GRAPH, start_input
    except ImportError:  # langchain comes with the dev dependencies, not with agent-wait's extras
        world.say("skipped: this scenario needs langchain (pip install 'langchain>=1,<2')")
        return

    with _router_runs(world, SUPPORT_GRAPH):
        world.say("the router now runs a LangChain agent with HumanInTheLoopMiddleware")
        world.say(f"start: the customer asks for a refund of {LARGE} on order {thread}")
        world.local.send({"thread_id": thread, "input": start_input(thread, LARGE)}, deduplication_id=uuid.uuid4().hex)
        question = world.question_of(world.pump())
        row = world.row(thread, question)
        world.check(
            "the middleware's question is open with its own decisions as actions",
            (row["status"], row.get("allowed_actions")) == ("open", ["approve", "edit", "reject"]),
        )

        def decide(answer: Any) -> list[Outcome]:
            message = {
                "thread_id": thread,
                "question_id": question,
                "answer": answer,
                "answered_by": "finance@example.com",
            }
            world.local.send(message, deduplication_id=uuid.uuid4().hex)
            return world.pump()

        world.say("finance answers with no decision at all")
        world.check(
            "an answer the agent cannot apply is refused",
            _kinds(decide({"decisions": []})) == ["refused:invalid_answer"],
        )
        world.check("the question is still open", world.row(thread, question)["status"] == "open")
        world.say("finance edits the refund down to 400 in the middleware's own shape")
        edit = {"type": "edit", "edited_action": {"name": "issue_refund", "args": {"order_id": thread, "amount": 400}}}
        world.check("the edit was applied", _kinds(decide({"decisions": [edit]})) == ["applied"])
        world.check("the refund ran exactly once", world.refunds(thread) == 1)
        refunds = world.local.client("dynamodb").query(
            TableName=world.local.environment[REFUND_TABLE_VARIABLE],
            KeyConditionExpression="order_id = :o",
            ExpressionAttributeValues={":o": {"S": thread}},
        )["Items"]
        world.check("for the amount finance set, 400", [item["amount"]["N"] for item in refunds] == ["400"])


@contextmanager
def _durable_lambda(world: World, handler: Callable[..., Any]) -> Iterator[Any]:
    """The durable SDK's local runner playing Lambda for `handler`, its Lambda API (callbacks) served on 127.0.0.1,
    and the stack's router pointed at it (`AWS_ENDPOINT_URL_LAMBDA`), as a deployed router reaches Lambda."""
    import logging
    import threading

    from aws_durable_execution_sdk_python_testing.runner import DurableFunctionTestRunner
    from aws_durable_execution_sdk_python_testing.web.server import WebServer, WebServiceConfig

    def played(event: Any, context: Any) -> Any:  # as the template's durable function: its calls judged by its role
        with world.local.running_as(f"{__package__}.durable.handler"):
            return handler(event, context)

    runner = DurableFunctionTestRunner(played, poll_interval=0.05, skip_time=False)
    # The runner's own executor behind the SDK's own web server: SendDurableExecutionCallbackSuccess over HTTP.
    server = WebServer(WebServiceConfig(host="127.0.0.1", port=0, log_level=logging.WARNING), runner._executor)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    before = os.environ.get("AWS_ENDPOINT_URL_LAMBDA")
    os.environ["AWS_ENDPOINT_URL_LAMBDA"] = f"http://127.0.0.1:{server.server_address[1]}"
    world.local.cold_start()
    try:
        yield runner
    finally:
        if before is None:
            os.environ.pop("AWS_ENDPOINT_URL_LAMBDA", None)
        else:
            os.environ["AWS_ENDPOINT_URL_LAMBDA"] = before
        world.local.cold_start()
        server.shutdown()
        server.server_close()
        runner.close()


def _asked_on(world: World, thread: str, *, seconds: float = 20.0) -> str:
    """The question the durable function announced on `thread` (on the SNS topic), once its submitter ran."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        created = [e for e in world.announced() if e["type"] == "wait.created" and e["thread_id"] == thread]
        if created:
            return str(created[-1]["question_id"])
        time.sleep(0.05)
    raise AssertionError(f"the durable function asked nothing on {thread} within {seconds:.0f} s")


def durable_function(world: World, thread: str) -> None:
    try:
        from .durable import CLOCK, handler
    except ImportError:  # the durable SDK comes with agent-wait[durable] (and [local])
        world.say("skipped: this scenario needs the durable SDK (pip install 'agent-wait[durable]')")
        return

    CLOCK[0] = world.clock  # asked by the clock the router and the sweep read, which the demo moves
    try:
        _refund_durably(world, thread, handler)
    finally:
        CLOCK[0] = utc_now


def _refund_durably(world: World, thread: str, handler: Callable[..., Any]) -> None:
    with _durable_lambda(world, handler) as runner:
        world.say(f"the refund agent runs as a Lambda durable function: order {thread} for {LARGE}")
        execution = runner.run_async(
            input=json.dumps({"order_id": thread, "amount": LARGE}), execution_name=f"refund-{thread}"
        )
        question = _asked_on(world, thread)
        row = world.row(thread, question)
        world.check(
            "its question is open in the same ledger, with finance's tag",
            (row["status"], row.get("tags")) == ("open", dict(FINANCE.tags)),
        )
        events = [e.event_type for e in runner.get_execution_history(execution).events]
        world.check(
            "the execution waits on its callback (no invocation runs meanwhile)",
            "CallbackStarted" in events and "ExecutionSucceeded" not in events,
        )
        world.check("the answer was applied", _kinds(world.answer(thread, question, "approve")) == ["applied"])
        finished = runner.wait_for_result(execution, timeout=30)
        result = json.loads(finished.result or "null")
        world.say(f"the durable function finished: {result}")
        world.check(
            "the router completed its callback and the function refunded",
            isinstance(result, dict) and result.get("status") == "refunded",
        )
        row = world.row(thread, question)
        world.check("the row says answered, then resumed", (row["status"], row["outcome"]) == ("resumed", "answered"))
        world.check("the refund ran exactly once", world.refunds(thread) == 1)


SCENARIOS: dict[str, tuple[str, Callable[[World, str], None]]] = {
    "auto-approve": ("Auto-approve under the limit", auto_approve),
    "approve": ("Approve over the limit", approve_over_limit),
    "reject": ("Reject", reject),
    "expire": ("Nobody answers: the sweep applies the default", nobody_answers),
    "escalate": ("Nobody answers for two days: a reminder, then finance's managers", remind_then_escalate),
    "duplicate": ("The same answer delivered twice", same_answer_twice),
    "race": ("Two different answers racing", two_answers_race),
    "redelivered-start": ("The start redelivered while the question is open", start_redelivered),
    "late-approve": ("A late approve after expiry", late_approve),
    "unknown-question": ("An answer for an unknown question", unknown_question),
    "middleware": ("A LangChain agent asking through HumanInTheLoopMiddleware", middleware),
    "durable": ("The refund agent as a Lambda durable function, answered the same way", durable_function),
}


def run(names: list[str], *, out: TextIO | None = None) -> int:
    """Run the named scenarios (all by default); 0 when every check passed, 1 otherwise."""
    stream: TextIO = out or sys.stdout
    unknown = [name for name in names if name not in SCENARIOS]
    if unknown:
        stream.write(f"unknown scenario(s) {unknown}; choose from: {', '.join(SCENARIOS)}\n")
        return 2
    from .local import template

    with progress("Synthesizing RefundAgentStack"):
        body = template()
    clock = MovableClock()
    with progress("Starting the embedded AWS emulator and deploying the stack"):
        local = EmulatedStack(body, clock=clock, extra_environment={"POWERTOOLS_LOG_LEVEL": "WARNING"})
        local.start()
    failed: list[str] = []
    try:
        world = World(local, clock, Observer(local), stream)
        for index, name in enumerate(names or list(SCENARIOS), start=1):
            title, scenario = SCENARIOS[name]
            stream.write(f"\n{index}. {title}\n")
            before = len(world.checks)
            thread = f"order-{name}-{uuid.uuid4().hex[:6]}"
            try:
                scenario(world, thread)
            except Exception as exc:  # a broken scenario is a wrong outcome, reported, not a traceback
                world.check(f"scenario raised {type(exc).__name__}: {exc}", False)
            if not all(ok for _, ok in world.checks[before:]):
                failed.append(name)
    finally:
        local.stop()
    total = len(names or SCENARIOS)
    stream.write(
        f"\n{total - len(failed)} of {total} scenarios behaved as they should"
        + (f"; wrong: {', '.join(failed)}\n" if failed else ".\n")
    )
    return 1 if failed else 0
