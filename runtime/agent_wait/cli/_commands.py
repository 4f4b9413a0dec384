"""`agent-wait start`, `questions` and `answer`: talk to a running stack through its queue and ledger."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from agent_wait.cli._target import DEV_USER, CliError, Target, answer_value
from agent_wait.common.canonical_json import dumps
from agent_wait.contract.messages import group_id_for, parse_answer
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import tracing
from agent_wait.engine.checks import content_refusal
from agent_wait.errors import MessageError

__all__ = (
    "ASKS_WIDTH",
    "answer",
    "clipped",
    "failures",
    "guarded",
    "ledger_for",
    "ledger_record",
    "list_questions",
    "queue_credit",
    "retry",
    "show",
    "start",
)


def _send(target: Target, message: dict[str, Any], *, deduplication_id: str | None = None) -> str:
    try:
        response = target.client("sqs").send_message(
            QueueUrl=target.queue_url,
            MessageBody=dumps(message),
            MessageGroupId=group_id_for(message["thread_id"]),
            MessageDeduplicationId=deduplication_id or uuid.uuid4().hex,
            **tracing.sqs_send_attributes(),  # a traced caller's context reaches the router's delivery
        )
    except Exception as exc:
        raise CliError(
            f"could not send to {target.queue_url} ({type(exc).__name__}: {exc}); is the stack running?"
        ) from None
    return response["MessageId"]


def parse_input(text: str, option: str = "--input", example: str = '{"order_id": "o-1", "amount": 900}') -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{option} is not JSON: {exc.msg} at character {exc.pos}. Quote it for the shell, e.g. {option} '{example}'"
        ) from None


def start(target: Target, thread_id: str, value: Any, start_id: str | None = None) -> str:
    """Send a start message; returns the SQS message id.

    With `start_id`, sending the same start again (a retried command) starts the run once: SQS drops the
    copy within five minutes, and the router, which records starts by id, republishes the open questions
    instead of asking again.
    """
    if start_id is not None and not start_id.strip():
        raise CliError("--start-id must not be empty; leave it out to send a new start each time")
    message = {"thread_id": thread_id, "input": value, "start_id": start_id or uuid.uuid4().hex}
    dedup = hashlib.sha256(f"{thread_id}\0{start_id}".encode()).hexdigest() if start_id else None
    return _send(target, message, deduplication_id=dedup)


def show(target: Target, question_id: str) -> dict[str, Any]:
    """One question as the answer API shows it: what is asked, its policy, its status and its outcome."""
    from agent_wait.host.api import question_view

    return question_view(ledger_record(target, question_id))


def ledger_record(target: Target, question_id: str) -> Any:
    """The ledger's record of `question_id` (`agent_wait.ledger.QuestionRecord`).

    Raises:
        CliError: no such question, or the ledger cannot be read.
    """
    record = _guard(lambda: _ledger(target).find(question_id), target)
    if record is None:
        raise CliError(f"no question {question_id!r}; list them with: agent-wait questions --status open")
    return record


ASKS_WIDTH = 72
"""The most characters of what a question asks that a `questions` line shows (JSON lines carry it whole)."""


def _row(record: Any) -> dict[str, Any]:
    """A ledger record as the listing prints it: the row's attributes (`expires_at` `never` when none); `asks`,
    what it asks in one line (`agent_wait.channels.asked.summary`: the call with its arguments, else its text);
    and in the one vocabulary of outcomes (`agent_wait.ledger.outcome`) what decided it (`outcome`: answered,
    expired, cancelled, withdrawn; None while open) and what the agent did with it (`agent`)."""
    from agent_wait.channels.asked import summary
    from agent_wait.ledger.outcome import agent_progress, question_outcome

    outcome = question_outcome(record)
    return {
        **record.to_item(),
        "asks": summary(record.envelope),
        "outcome": outcome.value if outcome else None,
        "agent": agent_progress(record).value,
    }


def clipped(text: str, width: int = ASKS_WIDTH) -> str:
    """`text` on one line, cut to `width` characters with `…` when it is longer."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _rows(target: Target, statuses: list[QuestionStatus]) -> list[dict[str, Any]]:
    """Every question under `statuses`, through the ledger's sharded status index."""
    ledger = _ledger(target)
    rows: list[dict[str, Any]] = []
    for value in statuses:
        cursor: str | None = None
        while True:
            page = _guard(lambda value=value, cursor=cursor: ledger.page(value, limit=100, cursor=cursor), target)
            rows += [_row(record) for record in page.records]
            cursor = page.cursor
            if cursor is None:
                break
    return rows


STATUS_CHOICES = ("open", "answered", "expired", "cancelled", "withdrawn", "resumed", "failed")
"""What `questions --status` takes: `open`; an outcome (`QuestionOutcome`: what decided it, whether or not the agent
has resumed since); or what the agent did with the decision, `resumed` or `failed`."""


def list_questions(target: Target, status: str | None) -> list[dict[str, Any]]:
    """Ledger rows (ids, status, outcome, deadline, actions), through the `by_status_shard` index: every question,
    the open ones, those with one outcome (`answered`, `expired`, `cancelled`, `withdrawn`: read under their own
    status and under `resumed` and `failed`, where a decided question moves once the agent has it), or those the
    agent `resumed` or `failed` on."""
    from agent_wait.ledger.outcome import QuestionOutcome, statuses_holding

    if status is not None and status not in STATUS_CHOICES:
        raise CliError(f"--status must be one of {list(STATUS_CHOICES)}; got {status!r}")
    # The ledger lists questions only: a failed start (in the same index) is listed by `agent-wait failures`.
    if status is None:
        return _rows(target, list(QuestionStatus))
    if status not in {outcome.value for outcome in QuestionOutcome}:
        return _rows(target, [QuestionStatus(status)])
    rows = _rows(target, list(statuses_holding(QuestionOutcome(status))))
    return [row for row in rows if row["outcome"] == status]


def _ledger(target: Target) -> Any:
    from agent_wait.aws.ledger import DynamoDbLedger

    return DynamoDbLedger(target.table, client=target.client("dynamodb"))


ledger_for = _ledger
"""The stack's question ledger (`DynamoDbLedger`), for the other commands' modules."""


def failures(target: Target) -> list[Any]:
    """Every failed start and resume (`agent_wait.ledger.ThreadFailure`), oldest first."""
    from agent_wait.engine.operations import failed_threads

    return _guard(lambda: failed_threads(_ledger(target), limit=1000), target)


def retry(target: Target, thread_id: str, retry_id: str | None) -> tuple[Any, str]:
    """Check the thread is failed, then send a retry message; returns (the failure, the retry id)."""
    from agent_wait.engine import SqsEntryQueue
    from agent_wait.engine.operations import retry_thread
    from agent_wait.errors import NothingToRetryError

    queue = SqsEntryQueue(target.queue_url, client=target.client("sqs"))
    try:
        return _guard(lambda: retry_thread(_ledger(target), queue, thread_id, retry_id=retry_id), target)
    except NothingToRetryError as exc:
        raise CliError(exc.message) from None


def _guard(call: Any, target: Target) -> Any:
    from agent_wait.errors import LedgerError

    try:
        return call()
    except LedgerError as exc:
        if isinstance(exc, LookupError):
            raise
        raise CliError(f"{exc.message}; is the stack running, and are these its outputs ({target.source})?") from None


guarded = _guard
"""`call()`, with a ledger that cannot be read turned into one `CliError` naming the stack, for the other modules."""


def answer(
    target: Target,
    question_id: str,
    action: str | None,
    note: str | None,
    answered_by: str | None,
    *,
    args: Any = None,
    value: Any = None,
) -> dict[str, Any]:
    """Check the question is open and the action allowed, then send the answer; returns the ledger row.

    Args:
        action: one of the question's allowed actions (None with `value`).
        note: a note sent with the answer.
        answered_by: who answers (recorded as such only from a trusted sender).
        args: edited arguments for the waiting call, sent as the answer's `args`.
        value: any JSON answer, sent as it is, instead of `action`, `note` and `args`.
    """
    # Found by its id alone (`by_question`, then the row by key), not by listing every status.
    record = _guard(lambda: _ledger(target).find(question_id), target)
    if record is None:
        raise CliError(f"no question {question_id!r}; list them with: agent-wait questions --status open")
    row = _row(record)
    if row["status"] != QuestionStatus.OPEN.value:
        raise CliError(f"question {question_id} is already {row['status']}; only open questions take answers")
    allowed = row.get("allowed_actions") or []
    if value is None and action not in allowed:
        raise CliError(f"action {action!r} is not allowed for question {question_id}; use one of: {', '.join(allowed)}")
    body = answer_value(action, note, args, value)
    # The router would refuse what does not fit the question, and a queue answer is fire-and-forget: say it here.
    try:
        parse_answer(body)
    except MessageError as exc:
        raise CliError(f"not sent: {exc.message}") from None
    refused = content_refusal(record, body)
    if refused is not None:
        raise CliError(f"not sent: question {question_id} would refuse it ({refused[0].value}): {refused[1]}")
    message = {"thread_id": row["thread_id"], "question_id": question_id, "answer": body}
    claimed, _ = queue_credit(target, answered_by)
    if claimed:
        message["answered_by"] = claimed
    _send(target, message)
    return row


def queue_credit(target: Target, answered_by: str | None) -> tuple[str | None, str]:
    """(who a queue answer names as `answered_by`, the words that say who it is credited to).

    On `agent-wait dev` every sender on the queue is the emulator's one IAM identity, which dev trusts: an answer
    that names nobody is credited to the dev user (`DEV_USER`, whom the curl line signs in as), not to that id.
    On a deployed stack the router credits the sender's own IAM identity, and takes `--by` as who answered only
    from a sender it trusts (`AGENT_WAIT_TRUSTED_SENDERS`); from any other it keeps it as a claim.
    """

    if target.issuer:  # the running `agent-wait dev`: only it has a local issuer
        person = answered_by or DEV_USER
        return person, f"credited to {person}"
    if answered_by:
        return answered_by, (
            f"credited to {answered_by} if the stack trusts your AWS identity, else to that identity "
            f"(sqs:<its IAM id>) with {answered_by} kept as a claim"
        )
    return None, "credited to your AWS identity (sqs:<its IAM id>); --by names a person"
