"""`ask` in a durable handler: record and announce the question from the callback's submitter, then wait."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from aws_durable_execution_sdk_python.config import Duration, WaitForCallbackConfig
from aws_durable_execution_sdk_python.context import DurableContext
from aws_durable_execution_sdk_python.types import WaitForCallbackContext

from agent_wait.asking.callbacks import callback_question_id, callback_source
from agent_wait.asking.wait import plain
from agent_wait.common.canonical_json import to_jsonable
from agent_wait.common.times import utc_now
from agent_wait.contract.envelope import Question, Transition, WaitEnvelope, check_question_size
from agent_wait.contract.publish import Announcers, PublishReport, as_announcers, publish
from agent_wait.contract.schema import QuestionStatus
from agent_wait.errors import ArgumentError, EnvelopeError, PolicyError
from agent_wait.ledger import Ledger, marks_unannounced
from agent_wait.ledger.due import announce_created
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = ("CALLBACK_MARGIN", "LONGEST_CALLBACK", "ask", "callback_timeout", "record_question")

CALLBACK_MARGIN = timedelta(minutes=15)
"""How much longer than the policy's timeout the callback itself waits. The ledger's deadline must arrive first: the
sweep (every minute) sends the default at its first run past the deadline and the router completes the callback
with it within seconds; fifteen minutes leave room for a sweep run that failed and a few redeliveries. Were the
callback to time out first, the handler would get `CallbackTimeoutError` instead of the default."""
LONGEST_CALLBACK = timedelta(days=365)
"""The longest a durable execution lives (and so the longest its callback can wait): one year."""
DEFAULT_NAME = "agent-wait question"
"""The `wait_for_callback` operation's name in the execution's history, unless `ask(name=...)`."""


def callback_timeout(policy: WaitPolicy, margin: timedelta = CALLBACK_MARGIN) -> int:
    """The callback's own timeout in whole seconds for `policy`: its timeout plus `margin`; 0 (none) without one.

    Raises:
        PolicyError: the timeout plus the margin is longer than a durable execution can wait (`LONGEST_CALLBACK`).
        ArgumentError: `margin` is negative.
    """
    if margin < timedelta(0):
        raise ArgumentError(f"margin must be zero or more; got {margin}", argument="margin")
    if policy.timeout is None:
        return 0
    total = policy.timeout + margin
    if total > LONGEST_CALLBACK:
        raise PolicyError(
            "timeout",
            policy.timeout_iso,
            f"a durable function waits at most {LONGEST_CALLBACK.days} days, and its callback must outlast the "
            f"deadline by the margin ({margin}); use a timeout of at most {LONGEST_CALLBACK - margin}",
        )
    return math.ceil(total.total_seconds())


def record_question(
    ledger: Ledger,
    question: Question,
    *,
    announce: Announcers = None,
    reply_to: Any = None,
    now: datetime | None = None,
) -> PublishReport | None:
    """Record `question` in the ledger and announce `wait.created`, as the router does for a graph's question.

    Idempotent: a question already recorded keeps its row (and its deadline). A submitter runs again only when the
    last run may have stopped before it announced, so an open question is announced again (consumers drop the
    repeat by `dedupe_key`). An announcement that fails makes the row due at once, so the sweep announces it again.
    Returns the announcement's report, or None when the question was decided already.
    """
    now = now or utc_now()
    envelope = WaitEnvelope.create(question, reply_to=reply_to, now=now)
    # Put announced where the ledger can mark it back: no write when the announcement succeeds, the common case.
    put_announced = marks_unannounced(ledger)
    opened = ledger.open(envelope, now=now, unannounced=not put_announced)
    record = opened.record
    if record.status is not QuestionStatus.OPEN:
        return None
    announcers = as_announcers(announce)
    # The submitter runs again only when its last run may have stopped before announcing: every run's announcement
    # is owed, so a failure marks the row unannounced for the sweep, as the router's does.
    return announce_created(
        ledger,
        record,
        lambda: publish(record.envelope.for_transition(Transition.CREATED), announcers),
        ok=lambda report: report.ok,
        owed=put_announced,
        now=now,
    )


def ask(
    context: DurableContext,
    question: Any,
    policy: WaitPolicy | None = None,
    *,
    ledger: Ledger,
    announce: Announcers = None,
    thread_id: str | None = None,
    reply_to: Any = None,
    name: str = DEFAULT_NAME,
    margin: timedelta = CALLBACK_MARGIN,
    clock: Callable[[], datetime] = utc_now,
) -> Any:
    """Ask `question` and wait for its decision with `context.wait_for_callback`; return the answer.

    The callback's submitter records the question in `ledger` and announces its envelope to `announce`: its
    `question_id` is `agent_wait.asking.callbacks.callback_question_id(callback_id)` and its `source` names the callback
    (`{"resume": "durable_callback", "callback_id": ..., "execution": <the execution's ARN>}`), so whichever door
    decides it, the router completes this callback. The answer comes back as the decision was recorded: a person's
    `{"action": ...}` (or their answer in the question's own shape), or, when nobody answered in time, the policy's
    `default`.

    Args:
        context: the durable handler's context.
        question: what is asked (any JSON: a dict, a pydantic model or a dataclass is turned into one).
        policy: deadline, default, allowed actions, who may answer, reminders, escalation, quorum.
        ledger: the question ledger the answer doors and the router read (`agent_wait.aws.DynamoDbLedger`).
        announce: announcers for `wait.created` (SNS, EventBridge, ...), as the router's.
        thread_id: the conversation the question belongs to; the durable execution's ARN by default.
        reply_to: published on the envelope as where answers go (the entry queue URL), as the router does.
        name: the operation's name in the execution's history.
        margin: how much longer than the policy's timeout the callback waits (`CALLBACK_MARGIN`, and why).
        clock: returns now (UTC); when the question counts as asked.

    Raises:
        EnvelopeError: the question is not JSON, or `policy` is not a `WaitPolicy`.
        QuestionTooLargeError: the question is over `MAX_QUESTION_BYTES`; ask with a reference instead.
        PolicyError: the policy's timeout is longer than a durable execution can wait (see `callback_timeout`).
        CallbackTimeoutError: (the SDK's) nobody completed the callback before its own timeout.
    """
    if policy is not None and not isinstance(policy, WaitPolicy):
        raise EnvelopeError(f"ask(policy=...) takes a WaitPolicy; got a {type(policy).__name__}")
    policy = policy or WaitPolicy()
    value = to_jsonable(plain(question), where="question")
    check_question_size(value)  # before anything waits: a question that cannot be recorded fails here, once
    if thread_id is not None and (not isinstance(thread_id, str) or not thread_id):
        raise ArgumentError(f"thread_id must be a non-empty string; got {thread_id!r}", argument="thread_id")
    execution = context.execution_context.durable_execution_arn
    thread = thread_id or execution
    config = WaitForCallbackConfig(timeout=Duration(seconds=callback_timeout(policy, margin)))

    def submitter(callback_id: str, _: WaitForCallbackContext) -> None:
        source = callback_source(callback_id, execution=execution)
        asked = Question(thread, callback_question_id(callback_id), value, policy, source=source)
        record_question(ledger, asked, announce=announce, reply_to=reply_to, now=clock())

    result = context.wait_for_callback(submitter, name=name, config=config)
    return _decoded(result)


def _decoded(result: Any) -> Any:
    """The callback's result as the router sent it (JSON text); a text that is not JSON (a callback completed by
    hand) is returned as it is."""
    if not isinstance(result, str):
        return result
    try:
        return json.loads(result)
    except ValueError:
        return result
