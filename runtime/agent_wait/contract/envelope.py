"""The outbound contract: one `WaitEnvelope` per question and lifecycle transition.

The fields, their types and meanings are those of the message-formats contract; `docs/message-formats.md`
is the reference a consumer reads. `Question` is what a binding hands over: the question and its policy,
checked (JSON, size) before anything is asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from agent_wait.common.canonical_json import canonical_json, dumps, to_jsonable
from agent_wait.common.ids import new_ulid
from agent_wait.common.times import deadline, require_aware, utc_now
from agent_wait.errors import EnvelopeError, QuestionTooLargeError
from agent_wait.policy.wait_policy import WaitPolicy

__all__ = ("ENVELOPE_FIELDS", "MAX_QUESTION_BYTES", "Question", "Transition", "WaitEnvelope", "check_question_size")

MAX_QUESTION_BYTES = 64 * 1024
"""The largest question, as UTF-8 canonical JSON, that agent-wait will publish.

SNS, SQS and EventBridge carry at most 256 KiB per message and a DynamoDB item at most 400 KB; the
envelope repeats ids and policy around the question, and a router message carries the answer too.
64 KiB leaves room for all of that on every backend. Larger payloads belong in S3 or a database:
ask with a reference (a key, a URL) instead of the payload.
"""

ENVELOPE_FIELDS: tuple[str, ...] = (
    "type",
    "event_id",
    "thread_id",
    "question_id",
    "question",
    "allowed_actions",
    "expires_at",
    "default",
    "answer_ttl",
    "source",
    "reply_to",
    "reply_with",
    "correlation",
    "tags",
    "rules",
)
"""Every field of the envelope, in contract order (`rules` extends the seed contract)."""


class Transition(StrEnum):
    """A step in a question's life; each can be announced as its own envelope type `wait.<transition>`."""

    CREATED = "created"
    """The question was asked and is open."""
    ANSWERED = "answered"
    """The first valid answer was accepted."""
    EXPIRED = "expired"
    """The deadline passed and the policy's default was applied."""
    CANCELLED = "cancelled"
    """The question was withdrawn: a person cancelled it (the agent receives the policy's `on_cancel`, else a
    cancellation, never the default), or the agent moved past it unanswered."""
    RESUMED = "resumed"
    """The agent has moved past the question; a UI can retract its buttons."""
    FAILED = "failed"
    """The question was decided, but the agent raised applying the decision; the thread waits for a retry."""
    REMINDER = "reminder"
    """The question is still open and a reminder of the policy fell due; `progress.reminder` counts them."""
    ESCALATED = "escalated"
    """An escalation step fell due: the envelope's `tags` and `rules.answerers` are the widened audience."""
    VOTED = "voted"
    """A quorum question took a vote that did not decide it (or did, just before `wait.answered`)."""
    EXTENDED = "extended"
    """The deadline moved later (`expires_at` is the new one); `progress` says from when, by whom, which move."""

    @property
    def repeats(self) -> bool:
        """True for steps that happen more than once per question; their `dedupe_key` carries a count."""
        return self in _REPEATING

    @property
    def event_type(self) -> str:
        return f"wait.{self.value}"

    @classmethod
    def parse(cls, value: str | Transition) -> Transition:
        """Accept `"created"`, `"wait.created"` or a `Transition`."""
        if isinstance(value, Transition):
            return value
        name = value.removeprefix("wait.") if isinstance(value, str) else value
        try:
            return cls(name)
        except ValueError:
            known = ", ".join(t.value for t in cls)
            raise EnvelopeError(f"unknown transition {value!r}; expected one of: {known}") from None


_REPEATING = frozenset({Transition.REMINDER, Transition.ESCALATED, Transition.VOTED, Transition.EXTENDED})


def check_question_size(question: Any, *, limit: int = MAX_QUESTION_BYTES) -> int:
    """Return the question's size in bytes as canonical JSON, or raise if it is over `limit`.

    Raises:
        EnvelopeError: the question is not JSON.
        QuestionTooLargeError: the question is larger than `limit`.
    """
    size = len(canonical_json(question, where="question").encode("utf-8"))
    if size > limit:
        raise QuestionTooLargeError(
            f"question is {size:,} bytes as JSON; the limit is {limit:,} bytes (MAX_QUESTION_BYTES) so that every "
            "announcer can carry it. Publish a reference instead: store the payload (S3, your database) and ask "
            "with its key or URL.",
            size=size,
            limit=limit,
        )
    return size


@dataclass(frozen=True, slots=True)
class Question:
    """A question a run is waiting on, as a binding hands it to `WaitEnvelope.create`.

    Checked on construction: the question must be JSON and within `MAX_QUESTION_BYTES`.
    """

    thread_id: str
    """The agent's conversation identity."""
    question_id: str
    """The framework's interrupt id (interrupt mode) or `question_id_for(...)` (async mode)."""
    value: Any = field(repr=False)  # ids only in a repr: the question may hold personal data
    """What is being asked: `{"function", "args"}` from `@wait`, or a bare interrupt's value."""
    policy: WaitPolicy = field(default_factory=WaitPolicy)
    """Deadline, default, allowed actions, tags and correlation."""
    source: Mapping[str, Any] | None = None
    """`{"function": name}` for a `@wait` question; None for a bare interrupt."""
    asked_at: datetime | None = None
    """When the question was first asked; fixes `expires_at` across republishes. None means now."""

    def __post_init__(self) -> None:
        for name in ("thread_id", "question_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise EnvelopeError(f"{name} must be a non-empty string; got {value!r}")
        if not isinstance(self.policy, WaitPolicy):
            raise EnvelopeError(f"policy must be a WaitPolicy; got a {type(self.policy).__name__}")
        object.__setattr__(self, "value", to_jsonable(self.value, where="question"))
        check_question_size(self.value)
        if self.asked_at is not None:
            try:
                object.__setattr__(self, "asked_at", require_aware(self.asked_at, "asked_at"))
            except ValueError as exc:
                raise EnvelopeError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class WaitEnvelope:
    """One announced question, exactly the fields of the contract.

    Build one with `WaitEnvelope.create(question)`; derive lifecycle envelopes with `for_transition`.
    `dedupe_key` (`"<type>:<question_id>"`) is stable across republishes; `event_id` is not.

    Example:
        >>> env = WaitEnvelope.create(Question("order-1", "q-1", {"function": "refund", "args": {"amount": 5}}))
        >>> env.type, env.dedupe_key, env.reply_with["question_id"]
        ('wait.created', 'wait.created:q-1', 'q-1')
    """

    type: str
    """`wait.created`, or a lifecycle type: `wait.answered`, `wait.expired`, `wait.cancelled`, `wait.resumed`."""
    event_id: str
    """A fresh ULID on every publish; for logs and tracing, never for deduplication."""
    thread_id: str
    """The agent's conversation identity."""
    question_id: str
    """The question's identity, stable across republishes."""
    question: Any
    """What is asked; opaque to every announcer."""
    allowed_actions: tuple[str, ...]
    """Which answers are meaningful."""
    expires_at: str | None
    """RFC 3339 UTC deadline, fixed when first asked; None when the policy has no timeout."""
    default: Any
    """The answer to assume when nobody answers in time."""
    answer_ttl: str | None
    """ISO 8601 duration an answer stays usable after it is given; None for no limit."""
    source: Mapping[str, Any] | None
    """`{"function": name}` for a `@wait` question; None for a bare interrupt."""
    reply_to: Any
    """Where to send the answer, if the host published one; None otherwise."""
    reply_with: Mapping[str, Any]
    """A filled-in reply: copy it, set `answer`, send it to the agent's entry point."""
    correlation: Mapping[str, str] | None
    """`{"provider", "id"}` when the question is tied to an external job."""
    tags: Mapping[str, str]
    """Routing hints from the policy."""
    rules: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({"answerers": None, "edits": True}))
    """How an answer is checked: `{"answerers": {"groups", "principals"} | None, "edits": bool}`. A UI shows the
    edit form only when `edits` is true; the host refuses answers that break a rule."""
    progress: Mapping[str, Any] | None = None
    """Only on `wait.reminder`, `wait.escalated`, `wait.voted` (and `wait.answered` of a quorum question): what
    happened, e.g. `{"reminder": 1, "of": 2}`, `{"escalation": 1, "of": 1}` or `{"votes": [...], "approvals": 1,
    "needed": 2}`. Absent from every other envelope, so the contract's fields are unchanged."""

    @classmethod
    def create(
        cls,
        question: Question,
        *,
        transition: Transition | str = Transition.CREATED,
        reply_to: Any = None,
        now: datetime | None = None,
    ) -> WaitEnvelope:
        """Build the envelope for `question`; `expires_at` counts from `question.asked_at`, else `now`."""
        try:
            asked_at = question.asked_at or (require_aware(now, "now") if now is not None else utc_now())
        except ValueError as exc:
            raise EnvelopeError(str(exc)) from None
        policy = question.policy
        try:
            expires_at = deadline(asked_at, policy.timeout)
        except OverflowError:
            raise EnvelopeError(
                f"expires_at would fall after the year 9999 (timeout {policy.timeout_iso}); use a shorter timeout"
            ) from None
        return cls(
            type=Transition.parse(transition).event_type,
            event_id=new_ulid(),
            thread_id=question.thread_id,
            question_id=question.question_id,
            question=question.value,
            allowed_actions=policy.allowed_actions,
            expires_at=expires_at,
            default=policy.default,
            answer_ttl=policy.answer_ttl_iso,
            source=MappingProxyType(dict(question.source)) if question.source is not None else None,
            reply_to=to_jsonable(reply_to, where="reply_to"),
            reply_with=MappingProxyType(
                {"thread_id": question.thread_id, "question_id": question.question_id, "answer": None}
            ),
            correlation=policy.correlation,
            tags=policy.tags,
            rules=MappingProxyType(policy.rules()),
        )

    @property
    def transition(self) -> Transition:
        return Transition.parse(self.type)

    @property
    def dedupe_key(self) -> str:
        """`"<type>:<question_id>"`: the key every backend with a natural key deduplicates on.

        A step that repeats (`wait.reminder`, `wait.escalated`, `wait.voted`) adds its count,
        `"<type>:<question_id>:<n>"`, so the second reminder is not taken for a copy of the first.
        """
        if self.transition.repeats:
            return f"{self.type}:{self.question_id}:{_ordinal(self.progress)}"
        return f"{self.type}:{self.question_id}"

    def for_transition(
        self, transition: Transition | str, *, progress: Mapping[str, Any] | None = None
    ) -> WaitEnvelope:
        """The same question announced as another lifecycle step, with a fresh `event_id`.

        Args:
            transition: the step.
            progress: what happened, for the steps that carry it (see `progress`); None drops it.
        """
        step = Transition.parse(transition)
        if step.repeats and progress is None:
            raise EnvelopeError(f"a {step.event_type} envelope needs its progress (which reminder, step or vote)")
        facts = MappingProxyType(to_jsonable(dict(progress), where="progress")) if progress is not None else None
        return replace(self, type=step.event_type, event_id=new_ulid(), progress=facts)

    def republished(self) -> WaitEnvelope:
        """The same envelope with a fresh `event_id`; `expires_at` and every other field stay put."""
        return replace(self, event_id=new_ulid())

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types in contract order."""
        return {
            "type": self.type,
            "event_id": self.event_id,
            "thread_id": self.thread_id,
            "question_id": self.question_id,
            "question": self.question,
            "allowed_actions": list(self.allowed_actions),
            "expires_at": self.expires_at,
            "default": self.default,
            "answer_ttl": self.answer_ttl,
            "source": dict(self.source) if self.source is not None else None,
            "reply_to": self.reply_to,
            "reply_with": dict(self.reply_with),
            "correlation": dict(self.correlation) if self.correlation is not None else None,
            "tags": dict(self.tags),
            "rules": dict(self.rules),
        } | ({"progress": dict(self.progress)} if self.progress is not None else {})

    def to_json(self) -> str:
        return dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WaitEnvelope:
        """Read an envelope back (from a queue body, a row, a webhook). Every contract field must be present.

        Raises:
            EnvelopeError: a field is missing, unknown, or has the wrong type.
        """
        if not isinstance(data, Mapping):
            raise EnvelopeError(f"an envelope must be a JSON object; got a {type(data).__name__}")
        # `rules` came after the seed contract: an envelope written before it reads as one without rules.
        missing = [name for name in ENVELOPE_FIELDS if name not in data and name != "rules"]
        if missing:
            raise EnvelopeError(f"envelope is missing field(s) {missing}; every field of the contract is required")
        defaults = {"rules": {"answerers": None, "edits": True}}
        plain = to_jsonable({name: data.get(name, defaults.get(name)) for name in ENVELOPE_FIELDS}, where="envelope")
        Transition.parse(plain["type"])
        for name in ("event_id", "thread_id", "question_id"):
            if not isinstance(plain[name], str) or not plain[name]:
                raise EnvelopeError(f"envelope field {name} must be a non-empty string; got {plain[name]!r}")
        if not isinstance(plain["allowed_actions"], list) or not all(
            isinstance(a, str) for a in plain["allowed_actions"]
        ):
            raise EnvelopeError("envelope field allowed_actions must be a list of strings")
        if not all(isinstance(plain[name], dict) for name in ("reply_with", "tags", "rules")):
            raise EnvelopeError("envelope fields reply_with, tags and rules must be objects")
        progress = to_jsonable(data.get("progress"), where="envelope")
        if progress is not None and not isinstance(progress, dict):
            raise EnvelopeError("envelope field progress must be an object when present")
        return cls(
            type=plain["type"],
            event_id=plain["event_id"],
            thread_id=plain["thread_id"],
            question_id=plain["question_id"],
            question=plain["question"],
            allowed_actions=tuple(plain["allowed_actions"]),
            expires_at=plain["expires_at"],
            default=plain["default"],
            answer_ttl=plain["answer_ttl"],
            source=plain["source"],
            reply_to=plain["reply_to"],
            reply_with=MappingProxyType(plain["reply_with"]),
            correlation=plain["correlation"],
            tags=MappingProxyType(plain["tags"]),
            rules=MappingProxyType(plain["rules"]),
            progress=MappingProxyType(progress) if progress is not None else None,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> WaitEnvelope:
        try:
            return cls.from_dict(json.loads(text))
        except json.JSONDecodeError as exc:
            raise EnvelopeError(f"envelope is not JSON: {exc.msg} at position {exc.pos}") from None

    def __repr__(self) -> str:  # ids only: the question may hold personal data
        return f"WaitEnvelope(type={self.type!r}, thread_id={self.thread_id!r}, question_id={self.question_id!r})"


def _ordinal(progress: Mapping[str, Any] | None) -> int:
    """The count a repeating step's `dedupe_key` carries: which reminder, which step, how many votes."""
    facts = progress or {}
    for name in ("reminder", "escalation", "extension"):
        if isinstance(facts.get(name), int):
            return int(facts[name])
    votes = facts.get("votes")
    return len(votes) if isinstance(votes, list) else 0
