"""`ask_person`, `tasks/get` and `tasks/cancel` over the question ledger: what the MCP server does, without the SDK.

`PersonAsker` is the whole behaviour of the MCP server's tool and task methods; `agent_wait.mcp.server` only wires it
to the `mcp` SDK. A call is checked (`ask_arguments`: a question, an optional answer schema, a named policy or tags;
never answerers), recorded like every other question (envelope `source` `{"resume": "polled", ...}`) and read back
as a task from its row (`agent_wait.mcp.task_state`). The row is put not yet announced and due at once, so the sweep
announces `wait.created` on its next run (within a minute) with the deployment's announcers, links and channels, as
it does for any question whose first announcement did not go out: the answer API's function needs no right to
publish, and the inbox lists the question at once.
A task is its caller's: another caller's `tasks/get` or `tasks/cancel` finds nothing (`None`), as for an unknown id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_wait.asking.polled import asked_by_of, polled_source
from agent_wait.common.canonical_json import to_jsonable
from agent_wait.common.times import utc_now
from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.answering import VerdictKind
from agent_wait.engine.checks import Answerer, answerer_for
from agent_wait.engine.handover import AnswerService
from agent_wait.errors import ArgumentError, EnvelopeError, PolicyError
from agent_wait.ledger import FollowUpLedger, Ledger, QuestionRecord
from agent_wait.ledger.due import make_due
from agent_wait.mcp.ids import TASK_ID_PREFIX, question_id_for, task_id_for, thread_id_for
from agent_wait.mcp.policies import McpPolicies
from agent_wait.mcp.task_state import TaskState, TaskView, task_view
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = ("ASK_FIELDS", "VIA", "AskArguments", "Caller", "PersonAsker", "ask_arguments")

VIA = "mcp"
"""The door's name: `source.via` of a question asked over MCP, and `via` of a cancel made with `tasks/cancel`."""
ASK_FIELDS = ("question", "response_schema", "policy", "tags", "idempotency_key")
"""The arguments `ask_person` takes; any other is refused, by name."""
_POLICY_FIELDS = frozenset(
    {"answerers", "answerer", "answerer_groups", "answerer_principals", "approvers", "allowed_actions", "timeout"}
    | {"default", "escalation", "quorum", "reminders", "grants", "on_cancel", "extend", "allow_edits"}
)
"""Fields a client might try in order to shape who answers or how: refused with a sentence saying the policy decides."""
MAX_KEY_LENGTH = 255
"""The longest `idempotency_key` accepted."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls the MCP server, as the route's authorizer proved it."""

    key: str
    """Their person key (`agent_wait.people.keys.person_key`): a JWT's verified email or `iss#sub`; an IAM
    principal's `iam:<arn>` (an assumed role's session name dropped). Recorded as who asked."""
    door: str
    """`jwt` (`POST /mcp`) or `iam` (`POST /mcp/iam`)."""
    groups: tuple[str, ...] = ()
    """Their proven groups (a JWT's groups claim)."""

    def answerer(self) -> Answerer:
        """The caller as the desk sees a cancel they make (`tasks/cancel`)."""
        return answerer_for(VIA, person=self.key, sender=f"{self.door}:{self.key}", groups=self.groups)


@dataclass(frozen=True, slots=True)
class AskArguments:
    """An `ask_person` call's arguments, checked. `repr` leaves out the question."""

    question: Any
    response_schema: Mapping[str, Any] | None
    policy: str | None
    tags: Mapping[str, str] | None
    idempotency_key: str | None

    def __repr__(self) -> str:
        return f"AskArguments(policy={self.policy!r}, tags={self.tags!r}, idempotency_key={self.idempotency_key!r})"


def ask_arguments(arguments: Mapping[str, Any] | None) -> AskArguments:
    """`arguments` checked as `ask_person` takes them.

    Raises:
        ArgumentError: a field the tool does not take (answerers, a deadline: the policy decides those), no
            question, a question that is neither text nor an object, a schema that is not an object, a bad key.
    """
    arguments = arguments or {}
    named = sorted(set(arguments) & _POLICY_FIELDS)
    if named:
        raise ArgumentError(
            f"ask_person does not take {named}: who may answer, the deadline and its default are set by the server's "
            "named policy; pass policy (or tags) to pick one",
            argument=named[0],
        )
    unknown = sorted(set(arguments) - set(ASK_FIELDS))
    if unknown:
        raise ArgumentError(f"unknown argument(s) {unknown}; ask_person takes {list(ASK_FIELDS)}", argument=unknown[0])
    question = arguments.get("question")
    if not (isinstance(question, str) and question.strip()) and not (isinstance(question, Mapping) and question):
        raise ArgumentError("question must be a non-empty text or object", argument="question")
    schema = arguments.get("response_schema")
    if schema is not None and not isinstance(schema, Mapping):
        raise ArgumentError("response_schema must be a JSON Schema object", argument="response_schema")
    key = arguments.get("idempotency_key")
    if key is not None and (not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY_LENGTH):
        raise ArgumentError(f"idempotency_key must be 1 to {MAX_KEY_LENGTH} characters", argument="idempotency_key")
    policy = arguments.get("policy")
    return AskArguments(question, schema, policy, arguments.get("tags"), key)


class PersonAsker:
    """Asks people for MCP callers and reads their tasks, on the question ledger.

    Args:
        ledger: the question ledger (the answer API's).
        policies: the named policies a call may ask under.
        service: decides cancels through the one desk (`tasks/cancel`).
        reply_to: published on the envelope as where answers go (the entry queue), as the router does.
        clock: returns now (UTC).
        poll_interval_ms: how often a client should poll `tasks/get`, in milliseconds.
    """

    def __init__(
        self,
        ledger: Ledger,
        policies: McpPolicies,
        *,
        service: AnswerService,
        reply_to: Any = None,
        clock: Callable[[], datetime] = utc_now,
        poll_interval_ms: int = 5000,
    ) -> None:
        self.ledger = ledger
        self.policies = policies
        self.service = service
        self.reply_to = reply_to
        self.clock = clock
        self.poll_interval_ms = poll_interval_ms

    def ask(self, caller: Caller, arguments: Mapping[str, Any] | None, *, request_id: str | int | None) -> TaskView:
        """Ask a person what `arguments` say, under the policy they name; the task (a retry: the same task).

        Raises:
            ArgumentError: refused arguments (`ask_arguments`), an unknown policy or tags that select none, a schema
                the policy cannot take, or an `idempotency_key` this caller used for another question.
        """
        asked = ask_arguments(arguments)
        name, named = self.policies.select(asked.policy, asked.tags)
        policy = _with_schema(named, asked.response_schema, name)
        task_id = task_id_for(
            caller.key, idempotency_key=asked.idempotency_key, request_id=request_id, arguments=dict(arguments or {})
        )
        value = to_jsonable(asked.question, where="question")  # shown as asked, like any other question
        existing = self.ledger.find(question_id_for(task_id))
        if existing is not None:
            if _fingerprint(existing.envelope.question) != _fingerprint(value):
                raise ArgumentError(
                    "this idempotency_key was used for another question; use a new key for a new question",
                    argument="idempotency_key",
                )
            return task_view(existing, task_id)
        source = {**polled_source(via=VIA, asked_by=caller.key, task_id=task_id), "policy": name}
        try:
            question = Question(thread_id_for(task_id), question_id_for(task_id), value, policy, source=source)
        except EnvelopeError as exc:
            raise ArgumentError(f"the question cannot be asked: {exc}", argument="question") from exc
        return task_view(self._record(question), task_id)

    def get(self, caller: Caller, task_id: str) -> TaskView | None:
        """`caller`'s task `task_id` as its question's row says; None when no such task is theirs."""
        record = self._theirs(caller, task_id)
        return task_view(record, task_id) if record is not None else None

    def cancel(self, caller: Caller, task_id: str) -> TaskView | None:
        """Cancel `caller`'s task `task_id` through the one desk (recorded `cancelled` by the caller); the task after.

        A task already decided stays as it was decided (cancelling is cooperative): its view is returned unchanged.
        None when no such task is theirs.
        """
        record = self._theirs(caller, task_id)
        if record is None:
            return None
        view = task_view(record, task_id)
        if view.state is not TaskState.WORKING:
            return view
        reason = "the asker cancelled the task (tasks/cancel)"
        answer_id = "mcp-cancel:" + hashlib.sha256(f"{caller.key}\0{task_id}".encode()).hexdigest()[:40]
        result = self.service.cancel(record.question_id, reason, caller.answerer(), answer_id=answer_id)
        after = result.verdict.record
        if result.verdict.kind is VerdictKind.REFUSED and after is None:
            return view
        return task_view(after or record, task_id)

    def _record(self, question: Question) -> QuestionRecord:
        """Put the question's row, not yet announced and due at once: the sweep announces it (see the module)."""
        now = self.clock()
        opened = self.ledger.open(WaitEnvelope.create(question, reply_to=self.reply_to, now=now), now=now)
        record = opened.record
        if record.status is QuestionStatus.OPEN and not record.announced and isinstance(self.ledger, FollowUpLedger):
            make_due(self.ledger, record, now=now, attempts=3, still=lambda row: not row.announced)
        return record

    def _theirs(self, caller: Caller, task_id: str) -> QuestionRecord | None:
        if not isinstance(task_id, str) or not task_id.startswith(TASK_ID_PREFIX) or len(task_id) > 128:
            return None
        record = self.ledger.find(question_id_for(task_id))
        if record is None or asked_by_of(record.envelope.source) != caller.key:
            return None  # another caller's task reads as no task at all: ids leak nothing
        return record


def _with_schema(policy: WaitPolicy, schema: Mapping[str, Any] | None, name: str) -> WaitPolicy:
    """`policy` with the call's answer schema (its actions then follow the schema)."""
    if schema is None:
        return policy
    fields = {**policy.to_dict(), "response_schema": dict(schema)}
    fields.pop("allowed_actions", None)
    try:
        return WaitPolicy.from_dict({**fields, "allowed_actions": None})
    except PolicyError as exc:
        problem = f"policy {name!r} cannot take this response_schema: {exc}"
        raise ArgumentError(problem, argument="response_schema") from exc


def _fingerprint(value: Any) -> str:
    return hashlib.sha256(repr(to_jsonable(value, where="question")).encode()).hexdigest()
