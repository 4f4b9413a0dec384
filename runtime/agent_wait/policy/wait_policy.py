"""`WaitPolicy`: what rides with a question: its deadline, its default, the answers that make sense."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from agent_wait.common.durations import (
    ACCEPTED_FORMS,
    MAX_DURATION,
    DurationSyntaxError,
    format_duration,
    parse_duration,
)
from agent_wait.errors import PolicyError
from agent_wait.policy._names import check_names
from agent_wait.policy.extension import Extension
from agent_wait.policy.fields import (
    MAX_DEFAULT_BYTES,
    MAX_RESPONSE_SCHEMA_BYTES,
    MAX_TAGS_BYTES,
    cancellation_answer,
    check_actions,
    check_correlation,
    check_extend,
    check_response_schema,
    check_tags,
    small_json,
)
from agent_wait.policy.followup import Escalation, FollowUps, Quorum, Reminder
from agent_wait.policy.grants import Grants
from agent_wait.policy.new_version import checked_on_new_version
from agent_wait.policy.passkey import PASSKEY_RULE, check_require_passkey

__all__ = (
    "DEFAULT_ACTIONS",
    "MAX_DEFAULT_BYTES",
    "MAX_RESPONSE_SCHEMA_BYTES",
    "MAX_TAGS_BYTES",
    "MAX_TIMEOUT",
    "SCHEMA_ACTION",
    "WaitPolicy",
    "schema_actions",
)

DEFAULT_ACTIONS: tuple[str, ...] = ("approve", "reject")
SCHEMA_ACTION = "submit"
"""The action shown for a question whose response schema names no `action` of its own."""

MAX_TIMEOUT = MAX_DURATION
"""Longest `timeout` and `answer_ttl`: about ten years, so every deadline is a date every store can hold.
Wait longer with `timeout=None` (no deadline)."""


def _duration_field(name: str, value: object) -> tuple[timedelta | None, str | None]:
    if value is None:
        return None, None
    try:
        delta = parse_duration(value)
    except DurationSyntaxError as exc:
        raise PolicyError(name, value, f"{name} must be {ACCEPTED_FORMS}; {exc}") from None
    if delta > MAX_TIMEOUT:
        raise PolicyError(
            name,
            value,
            f"{name} must be at most P{MAX_TIMEOUT.days}D (about ten years) so its deadline is a date every "
            f"store can hold; got {value!r}. To wait with no deadline, leave {name} unset",
        )
    text = value.strip().upper() if isinstance(value, str) else format_duration(delta)
    return delta, text


@dataclass(frozen=True, slots=True, init=False)
class WaitPolicy:
    """How long a question waits, what to assume if nobody answers, and which answers make sense.

    Every field is checked at construction, so a bad policy fails where it is written, before
    anything is asked or published.

    Example:
        >>> FINANCE = WaitPolicy(timeout="P3D", default={"action": "reject"}, tags={"approver_group": "finance"})
        >>> FINANCE.timeout_iso, FINANCE.allowed_actions
        ('P3D', ('approve', 'reject'))
    """

    timeout: timedelta | None
    """How long the question stays open; None waits forever. Given as ISO 8601 or seconds."""
    timeout_iso: str | None
    """`timeout` as the ISO 8601 text published in the envelope."""
    default: Any
    """The answer to apply when the timeout passes (any JSON; None expires with a null answer)."""
    allowed_actions: tuple[str, ...]
    """The `action` values an answer may carry. Never empty. By default `approve` and `reject`; with a
    `response_schema`, the enum of its `action` property, or `("submit",)` when it has none."""
    tags: Mapping[str, str]
    """Routing hints (str to str); announcers turn them into attributes a subscriber can filter on."""
    correlation: Mapping[str, str] | None
    """`{"provider": ..., "id": ...}` when the question is tied to an external job."""
    answer_ttl: timedelta | None
    """How long an answer stays usable after it is given; None for no limit."""
    answer_ttl_iso: str | None = field(default=None)
    """`answer_ttl` as ISO 8601 text."""
    answerer_groups: tuple[str, ...] = ()
    """When set, only people in one of these groups (an API user's group claims) may answer."""
    answerer_principals: tuple[str, ...] = ()
    """When set, only these queue senders (IAM role or user unique ids, e.g. `AROA...`) may answer directly."""
    allow_edits: bool = False
    """Whether an approval may carry edited arguments (`{"action": "approve", "args": {...}}`). Default False: an
    approval runs the call as it was asked. True lets an approver change a `@wait` function's parameters, each
    checked against the parameter's annotation before the decision. Never with a `quorum`."""
    response_schema: Mapping[str, Any] | None = None
    """A JSON Schema the answer must fit. When set, the answer is the value itself (no `action` of ours is
    required); the host refuses one that does not fit before the decision. LangGraph's
    `interrupt(value, response_schema=...)` sets it."""
    reminders: tuple[Reminder, ...] = ()
    """When to announce the question again (`wait.reminder`), in due order; see `agent_wait.policy.Reminder`."""
    escalation: tuple[Escalation, ...] = ()
    """Steps that widen who is told and who may answer as time passes (`wait.escalated`), in order."""
    quorum: Quorum | None = None
    """How many distinct answerers must approve, and which answers veto; None: the first valid answer decides."""
    extend: Extension | None = None
    """Who may move the deadline later, and by how much in all (`agent_wait.policy.extension.Extension`); None: nobody.
    Needs a `timeout`."""
    on_cancel: Any = None
    """The answer the agent receives when a person cancels the question (`POST /questions/{id}/cancel`, `agent-wait
    cancel`), recorded `cancelled` with who and why (any JSON). None: a cancellation, `{"action": "cancelled",
    "reason", "by"}` (`agent_wait.dialects.cancellation`), never the `default`, which may approve."""
    on_new_version: str | None = None
    """After a redeploy: `"resume"` while compatible, `"fail"`; None: the host's choice (docs/versions.md)."""
    push_arguments: bool = False
    """Whether a web push of this question may show its arguments' values (`agent_wait.channels.push`). Default
    False: a push crosses a push service and shows on a lock screen, so it names the call and its parameters only."""
    grants: Grants | None = None
    """Who may approve a `@wait` question *and* grant later asks of the same call, and how far a grant may reach
    (`agent_wait.policy.grants.Grants`); None: nobody may grant, every ask is asked (docs/policies.md)."""
    require_passkey: tuple[str, ...] = ()
    """The actions a person must confirm with a registered passkey (WebAuthn) in the inbox, signing a digest of the
    question, the arguments as approved, the action and the time (docs/proving.md). `True` at construction: every
    allowed action. Empty: none. Not with `grants` or a `quorum`; a door that cannot do WebAuthn is refused."""

    def __init__(
        self,
        *,
        timeout: str | float | None = None,
        default: Any = None,
        allowed_actions: Iterable[str] | None = None,
        tags: Mapping[str, str] | None = None,
        correlation: Mapping[str, str] | None = None,
        answer_ttl: str | float | None = None,
        answerer_groups: Iterable[str] = (),
        answerer_principals: Iterable[str] = (),
        allow_edits: bool | None = None,
        response_schema: Mapping[str, Any] | None = None,
        reminders: Iterable[Reminder | str | float | Mapping[str, Any]] | None = None,
        escalation: Iterable[Escalation | Mapping[str, Any]] | None = None,
        quorum: Quorum | int | Mapping[str, Any] | None = None,
        extend: Extension | Mapping[str, Any] | None = None,
        on_cancel: Any = None,
        on_new_version: str | None = None,
        grants: Grants | Mapping[str, Any] | None = None,
        require_passkey: bool | Iterable[str] | None = None,
        push_arguments: bool = False,
    ) -> None:
        timeout_delta, timeout_text = _duration_field("timeout", timeout)
        ttl_delta, ttl_text = _duration_field("answer_ttl", answer_ttl)
        if allowed_actions is None:
            allowed_actions = DEFAULT_ACTIONS if response_schema is None else _schema_actions(response_schema)
        actions = check_actions(allowed_actions)
        checked_tags = check_tags(tags)
        checked_correlation = check_correlation(correlation)
        checked_default = small_json(
            "default",
            default,
            shown=default,
            limit=MAX_DEFAULT_BYTES,
            limit_name="MAX_DEFAULT_BYTES",
            advice=": default to a small answer that refers to large content",
        )
        object.__setattr__(self, "timeout", timeout_delta)
        object.__setattr__(self, "timeout_iso", timeout_text)
        object.__setattr__(self, "default", checked_default)
        object.__setattr__(self, "allowed_actions", actions)
        object.__setattr__(self, "tags", checked_tags)
        object.__setattr__(self, "correlation", checked_correlation)
        object.__setattr__(self, "answer_ttl", ttl_delta)
        object.__setattr__(self, "answer_ttl_iso", ttl_text)
        object.__setattr__(self, "answerer_groups", check_names("answerer_groups", answerer_groups, spaces=False))
        object.__setattr__(self, "answerer_principals", check_names("answerer_principals", answerer_principals))
        if quorum is not None and response_schema is not None and Quorum.parse(quorum).approvals > 1:
            raise PolicyError(
                "quorum",
                Quorum.parse(quorum).to_dict(),
                "a quorum counts votes by their action; a question with a response_schema takes free-form answers. "
                "Use one or the other",
            )
        followups = FollowUps.build(
            reminders=reminders,
            escalation=escalation,
            quorum=quorum,
            timeout=timeout_delta,
            allowed_actions=actions,
        )
        if allow_edits is None:
            allow_edits = False  # opt in: an approver changing what the call does is a choice the author makes
        if not isinstance(allow_edits, bool):
            raise PolicyError("allow_edits", allow_edits, f"allow_edits must be True or False; got {allow_edits!r}")
        if allow_edits and followups.quorum is not None:
            raise PolicyError(
                "allow_edits",
                allow_edits,
                "a quorum question cannot allow edited arguments: each voter could approve different ones, and the "
                "agent receives one answer. Leave allow_edits unset",
            )
        object.__setattr__(self, "allow_edits", allow_edits)
        object.__setattr__(self, "response_schema", check_response_schema(response_schema))
        object.__setattr__(self, "reminders", followups.reminders)
        object.__setattr__(self, "escalation", followups.escalation)
        object.__setattr__(self, "quorum", followups.quorum)
        object.__setattr__(self, "extend", check_extend(extend, timeout_delta))
        object.__setattr__(self, "on_cancel", cancellation_answer(on_cancel))
        object.__setattr__(self, "on_new_version", checked_on_new_version(on_new_version))
        object.__setattr__(self, "grants", _checked_grants(grants, self))
        object.__setattr__(self, "require_passkey", _checked_passkey(require_passkey, self))
        if not isinstance(push_arguments, bool):
            raise PolicyError(
                "push_arguments", push_arguments, f"push_arguments must be True or False; got {push_arguments!r}"
            )
        object.__setattr__(self, "push_arguments", push_arguments)

    @property
    def followups(self) -> FollowUps:
        """The reminders, escalation steps and quorum, as the host reads them from `rules`."""
        return FollowUps(self.reminders, self.escalation, self.quorum, self.timeout)

    @property
    def restricts_answerers(self) -> bool:
        """True when only named groups or principals may answer."""
        return bool(self.answerer_groups or self.answerer_principals)

    def rules(self) -> dict[str, Any]:
        """How an answer is checked, as the envelope's `rules` field: who may answer, whether edits are allowed."""
        answerers = (
            {"groups": list(self.answerer_groups), "principals": list(self.answerer_principals)}
            if self.restricts_answerers
            else None
        )
        rules: dict[str, Any] = {"answerers": answerers, "edits": self.allow_edits}
        if self.response_schema is not None:
            rules["response_schema"] = dict(self.response_schema)
        rules.update(self.followups.rules())
        if self.extend is not None:
            rules["extend"] = self.extend.to_dict()
        if self.on_cancel is not None:
            rules["on_cancel"] = self.on_cancel
        rules.update({"on_new_version": self.on_new_version} if self.on_new_version else {})
        if self.grants is not None:
            rules["grants"] = self.grants.to_dict()
        if self.require_passkey:
            rules[PASSKEY_RULE] = {"actions": list(self.require_passkey)}
        if self.push_arguments:
            rules["push_arguments"] = True
        return rules

    def to_dict(self) -> dict[str, Any]:
        """The policy as JSON, in the form `from_dict` reads back (used to carry it through a checkpoint)."""
        data = {
            "timeout": self.timeout_iso,
            "default": self.default,
            "allowed_actions": list(self.allowed_actions),
            "tags": dict(self.tags),
            "correlation": dict(self.correlation) if self.correlation is not None else None,
            "answer_ttl": self.answer_ttl_iso,
            "answerer_groups": list(self.answerer_groups),
            "answerer_principals": list(self.answerer_principals),
            "allow_edits": self.allow_edits,
        }
        if self.response_schema is not None:
            data["response_schema"] = dict(self.response_schema)
        data.update(self.followups.rules())
        if self.extend is not None:
            data["extend"] = self.extend.to_dict()
        if self.on_cancel is not None:
            data["on_cancel"] = self.on_cancel
        data.update({"on_new_version": self.on_new_version} if self.on_new_version else {})
        if self.grants is not None:
            data["grants"] = self.grants.to_dict()
        if self.require_passkey:
            data["require_passkey"] = list(self.require_passkey)
        if self.push_arguments:
            data["push_arguments"] = True
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WaitPolicy:
        """Rebuild a policy written by `to_dict`. Unknown keys are refused so a typo is not silently lost."""
        known = {
            "timeout",
            "default",
            "allowed_actions",
            "tags",
            "correlation",
            "answer_ttl",
            "answerer_groups",
            "answerer_principals",
            "allow_edits",
            "response_schema",
            "reminders",
            "escalation",
            "quorum",
            "extend",
            "on_cancel",
            "on_new_version",
            "grants",
            "require_passkey",
            "push_arguments",
        }
        unknown = sorted(set(data) - known)
        if unknown:
            raise PolicyError(
                unknown[0], data[unknown[0]], f"unknown policy field(s) {unknown}; known: {sorted(known)}"
            )
        return cls(
            timeout=data.get("timeout"),
            default=data.get("default"),
            allowed_actions=data.get("allowed_actions", DEFAULT_ACTIONS),
            tags=data.get("tags"),
            correlation=data.get("correlation"),
            answer_ttl=data.get("answer_ttl"),
            answerer_groups=data.get("answerer_groups") or (),
            answerer_principals=data.get("answerer_principals") or (),
            allow_edits=data.get("allow_edits"),
            response_schema=data.get("response_schema"),
            reminders=data.get("reminders"),
            escalation=data.get("escalation"),
            quorum=data.get("quorum"),
            extend=data.get("extend"),
            on_cancel=data.get("on_cancel"),
            on_new_version=data.get("on_new_version"),
            grants=data.get("grants"),
            require_passkey=data.get("require_passkey"),
            push_arguments=data.get("push_arguments", False),
        )

    def __repr__(self) -> str:
        return (
            f"WaitPolicy(timeout={self.timeout_iso!r}, allowed_actions={self.allowed_actions!r}, "
            f"tags={dict(self.tags)!r}, answer_ttl={self.answer_ttl_iso!r}, "
            f"answerer_groups={self.answerer_groups!r}, allow_edits={self.allow_edits!r}"
            + (f", reminders={[r.to_dict() for r in self.reminders]!r}" if self.reminders else "")
            + (f", escalation={[s.to_dict() for s in self.escalation]!r}" if self.escalation else "")
            + (f", quorum={self.quorum.to_dict()!r}" if self.quorum else "")
            + (f", extend={self.extend.to_dict()!r}" if self.extend else "")
            + (f", grants={self.grants.to_dict()!r}" if self.grants else "")
            + (f", require_passkey={self.require_passkey!r}" if self.require_passkey else "")
            + ")"
        )


def _checked_grants(grants: Grants | Mapping[str, Any] | None, policy: WaitPolicy) -> Grants | None:
    """The policy's `grants`, checked against the rest of it: a grant approves later calls, so the questions this
    policy asks must be ones one person's approval decides."""
    if grants is None:
        return None
    checked = Grants.parse(grants)
    if policy.response_schema is not None or "approve" not in policy.allowed_actions:
        raise PolicyError(
            "grants",
            checked.to_dict(),
            "grants approve later calls, and this policy's questions cannot be approved (a response_schema, or no "
            "'approve' action): leave grants unset",
        )
    if policy.quorum is not None and policy.quorum.approvals > 1:
        raise PolicyError(
            "grants",
            checked.to_dict(),
            "this policy needs several approvals, and a grant is one person's decision: leave grants unset, or ask "
            "without a quorum",
        )
    return checked


def _checked_passkey(value: bool | Iterable[str] | None, policy: WaitPolicy) -> tuple[str, ...]:
    """The actions a passkey must confirm, checked against the rest of the policy: a signed decision is one person's
    decision of one call, so no standing grant may decide it for them and no quorum splits it into votes."""
    actions = check_require_passkey(value, policy.allowed_actions)
    if actions and policy.grants is not None:
        raise PolicyError(
            "require_passkey",
            list(actions),
            "a question that needs a passkey is not grantable: a standing grant would decide later asks with no "
            "passkey. Leave grants unset, or require_passkey unset",
        )
    if actions and policy.quorum is not None:
        raise PolicyError(
            "require_passkey",
            list(actions),
            "a quorum question cannot require a passkey: it is decided by votes, and a signed decision is one "
            "person's. Ask without a quorum, or leave require_passkey unset",
        )
    return actions


def _schema_actions(schema: Any) -> tuple[str, ...]:
    return schema_actions(schema) if isinstance(schema, Mapping) else DEFAULT_ACTIONS  # a bad schema is refused next


def schema_actions(schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The actions a response schema offers: its `action` property's `enum` (or `const`), else `("submit",)`."""
    properties = schema.get("properties")
    action = properties.get("action") if isinstance(properties, Mapping) else None
    if isinstance(action, Mapping):
        named = action.get("enum", [action.get("const")])
        if isinstance(named, list) and named and all(isinstance(a, str) and a for a in named):
            return tuple(dict.fromkeys(named))
    return (SCHEMA_ACTION,)
