"""What the router did with one message: a typed outcome, with a reason when it refused."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = (
    "OUTCOME_LINE_FIELDS",
    "DeadLetterReason",
    "Outcome",
    "OutcomeKind",
    "RefusalReason",
    "outcome_fields",
    "said_of",
)


class OutcomeKind(StrEnum):
    STARTED = "started"
    """A start ran the agent (a new thread or a new turn)."""
    START_REPLAYED = "start_replayed"
    """A start already applied arrived again; the agent did not run, open questions were republished."""
    APPLIED = "applied"
    """An answer won its question and the agent resumed."""
    REFUSED = "refused"
    """An answer was refused; nothing ran. `reason` says why."""
    DEAD_LETTERED = "dead_lettered"
    """The message was moved to the dead-letter queue with its reason (`DeadLetterReason` or a shape slug)."""
    RETRIED = "retried"
    """An operator's retry applied a failed thread's recorded start or decision, and the thread went on."""
    VOTED = "voted"
    """A vote on a quorum question was recorded (or had been: a redelivery); the question waits for more."""


class RefusalReason(StrEnum):
    """Why an answer was refused. Each is logged and counted; none runs anything."""

    UNKNOWN_THREAD = "unknown_thread"
    """No question was ever asked on this thread."""
    UNKNOWN_QUESTION = "unknown_question"
    """The thread exists but never asked this question."""
    ALREADY_DECIDED = "already_decided"
    """Another answer already won."""
    DUPLICATE = "duplicate"
    """This exact answer (same answer id) was already applied; a redelivery or a resend."""
    EXPIRED = "expired"
    """The question's deadline passed; its default applies, a late answer does not."""
    CANCELLED = "cancelled"
    """The question was cancelled: by a person (`POST /questions/{id}/cancel`), or because the agent moved past it."""
    ACTION_NOT_ALLOWED = "action_not_allowed"
    """The answer's action is not one of the question's `allowed_actions`."""
    ANSWER_STALE = "answer_stale"
    """The answer's own `valid_until` has passed."""
    NOT_DUE = "not_due"
    """A deadline answer arrived before the question's `expires_at`."""
    NOT_PARKED = "not_parked"
    """The ledger says open but the agent is not waiting on the question (it was closed elsewhere)."""
    THREAD_FAILED = "thread_failed"
    """The thread is failed (the agent raised); nothing applies to it until `agent-wait retry`."""
    NOTHING_TO_RETRY = "nothing_to_retry"
    """A retry arrived for a thread that is not failed (never, or a retry already ran)."""
    ANSWERER_NOT_ALLOWED = "answerer_not_allowed"
    """The policy names who may answer, and this answerer (group claims, queue principal) is not among them."""
    EDIT_NOT_ALLOWED = "edit_not_allowed"
    """The answer edits the call's arguments, and the policy does not allow edits."""
    NOT_TRUSTED = "not_trusted"
    """A deadline answer from a sender the deployment does not trust to send one, or a vote on a quorum question
    from a queue sender that is not trusted to name the person voting (a quorum counts people, not roles)."""
    ALREADY_VOTED = "already_voted"
    """On a quorum question, this answerer voted before; a second vote changes nothing."""
    INVALID_ANSWER = "invalid_answer"
    """The answer cannot be applied: an edit names an unknown parameter, or a dialect's answer has the wrong shape
    (`agent_wait.dialects`). Refused before the decision, so the question stays open for a correct answer."""
    GRANT_REFUSED = "grant_refused"
    """The approval asked for a standing grant the policy does not allow (`agent_wait.policy.grants`: it would widen the
    call, outlive or outnumber the policy's limits, or come from someone who may not grant). Nothing was decided or
    granted: the same approval without the grant, or with a narrower one, may still win."""
    THREAD_BUSY = "thread_busy"
    """A door that cannot wait (the answer API, a link) found the agent running on the thread; try again shortly.
    Nothing was decided: the run may move past the question."""
    PASSKEY_REQUIRED = "passkey_required"
    """The question's policy needs the answer confirmed with a passkey (`require_passkey`), and it came without one:
    through a door that cannot do WebAuthn (Slack, Teams, an email link, the queue) or the API without an assertion.
    The detail points to the inbox, where the person's passkey confirms it."""
    PASSKEY_REFUSED = "passkey_refused"
    """The answer carried a passkey assertion that does not confirm it: not this person's passkey, a signature over
    another question, arguments, action or time, a wrong origin, or prepared too long ago. Nothing was decided."""


class DeadLetterReason(StrEnum):
    """Why the router put a message in the dead-letter queue (besides a malformed shape, `bad_*`/`not_*`)."""

    AGENT_FAILED = "agent_failed"
    """The agent raised applying this start, answer or retry; the thread is failed until retried."""
    THREAD_FAILED = "thread_failed"
    """The thread was already failed; redrive this message after `agent-wait retry`."""
    GROUP_MISMATCH = "group_mismatch"
    """The record's FIFO message group is not its thread's (`group_id_for`); it could run beside the thread."""
    SENDER_NOT_ALLOWED = "sender_not_allowed"
    """A start from a queue sender the deployment did not allow to start runs (`grant_send_starts`)."""
    REJECTED_BY_STORE = "rejected_by_store"
    """A store refused what applying the message would write (DynamoDB `ValidationException`)."""
    THREAD_BUSY = "thread_busy"
    """Another delivery held the thread's lease on every receive."""
    RETRIES_EXHAUSTED = "retries_exhausted"
    """The router could not apply the message on any receive (a store or network failure); the detail names it."""
    CALLBACK_REFUSED = "callback_refused"
    """The question's durable function callback could not be completed: Lambda refused it (it timed out, or was
    completed or failed already). The decision stands, the row says `failed` (never `resumed`); the thread is not
    failed, since the execution no longer waits on this question."""
    ARGUMENTS_CHANGED = "arguments_changed"
    """A `@wait` call re-run on resume computed other arguments than the call that was approved
    (`ArgumentsChangedError`): nothing ran, and the thread is failed as for `agent_failed`. Make the code before the
    question deterministic, deploy, then `agent-wait retry` (the same approval applies to the same call)."""
    CHECKPOINT_TOO_LARGE = "checkpoint_too_large"
    """The agent's state (a checkpoint, or one step's writes) is over what its store holds: DynamoDB's 400 KB item
    limit without the checkpoint bucket. Not retried, since every retry would fail the same way; the thread is
    failed as for `agent_failed`. Turn on the checkpoint bucket (or shrink the state), then `agent-wait retry`."""
    VERSION_CHANGED = "version_changed"
    """The question was asked under another version of the agent and may not resume under this one: its node or
    `@wait` function is gone or changed, its policy says `on_new_version="fail"`, or the migration raised
    (docs/versions.md). The thread is failed as for `agent_failed`; deploy a fix or a migration, then
    `agent-wait retry`."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of handling one message."""

    kind: OutcomeKind
    thread_id: str | None = None
    question_id: str | None = None
    reason: RefusalReason | str | None = None
    """The refusal reason, or the dead-letter reason."""
    detail: str = ""
    """One human sentence (ids only, never question content)."""
    asked: tuple[str, ...] = ()
    """Question ids the agent is parked on after this message."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    """Ids the message's one INFO line carries besides the outcome's own (`start_id`, `retry_id`)."""
    error: BaseException | None = field(default=None, repr=False, compare=False)
    """The agent's exception when it raised (`agent_failed`), for a local host to show its traceback. Never
    logged or sent anywhere: its text may quote the agent's input or the answer."""

    @classmethod
    def refused(cls, reason: RefusalReason, thread_id: str, question_id: str, detail: str) -> Outcome:
        return cls(OutcomeKind.REFUSED, thread_id, question_id, reason, detail)

    @property
    def ok(self) -> bool:
        return self.kind in (OutcomeKind.STARTED, OutcomeKind.START_REPLAYED, OutcomeKind.APPLIED, OutcomeKind.VOTED)


# -- the one INFO line per message -------------------------------------------------------------------------------

_SAID = {
    OutcomeKind.STARTED: "start applied",
    OutcomeKind.START_REPLAYED: "start replayed; agent not run",
    OutcomeKind.APPLIED: "answer applied",
    OutcomeKind.RETRIED: "failed thread retried; it runs again",
    OutcomeKind.VOTED: "vote recorded",
}
OUTCOME_LINE_FIELDS = ("outcome", "reason", "thread_id", "question_id", "message_id", "asked", "detail")
"""The fields of the router's one INFO line per message (`outcome_fields`), besides an outcome's own `extra` ids
(`start_id`, `retry_id`); a field with no value is left out. docs/operate.md's runbooks search by these."""


def said_of(outcome: Outcome) -> tuple[str, tuple[str, ...]]:
    """The message of the router's one INFO line for `outcome`, and its arguments: `start applied`, `answer
    applied`, ..., `message refused: <reason>`, `message dead-lettered: <reason>` (the texts docs/host.md names)."""
    said = _SAID.get(outcome.kind)
    if said is not None:
        return said, ()
    verb = "refused" if outcome.kind is OutcomeKind.REFUSED else "dead-lettered"
    return f"message {verb}: %s", (str(outcome.reason),)


def outcome_fields(outcome: Outcome, message_id: str | None) -> dict[str, Any]:
    """The structured fields of the router's one INFO line for `outcome`: ids, the outcome and its reason, the
    questions the agent waits on after it, and its one-sentence detail (ids only, never question content)."""
    fields: dict[str, Any] = {
        "outcome": outcome.kind.value,
        "reason": str(outcome.reason) if outcome.reason else None,
        "thread_id": outcome.thread_id,
        "question_id": outcome.question_id,
        "message_id": message_id,
        "asked": list(outcome.asked) or None,
        "detail": outcome.detail or None,
        **outcome.extra,
    }
    return {name: value for name, value in fields.items() if value is not None}
