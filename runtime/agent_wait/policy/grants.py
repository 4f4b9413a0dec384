"""Standing grants: an approval that also decides later asks of the same call, for a while, never a wider one.

`WaitPolicy(grants=Grants(groups=["finance-leads"], max_ttl="PT8H", max_uses=20))` lets a person who may answer a
`@wait` question approve it *and* grant: the same call again, or a narrower pattern over the same function, for at
most `max_ttl` and `max_uses` asks. Without `grants=` nobody may grant: a grant is a decision made before the
question exists, so a policy author opts in and says who may make one and how far it may reach.

What a person asks for (`GrantRequest`, the `grant` field of an answer) is checked against the question asked and
the policy (`grant_terms`) before anything is recorded, and refused with a `GrantError` that says why when it would
widen: a pin the asked call does not satisfy, a pin on a parameter the function does not have, a time or number of
uses over the policy's limit, a question a grant may not cover (a free-form answer, one that cannot be approved, a
quorum), edits, or a person the policy does not let grant. The result (`GrantTerms`) is
exactly what a grant covers: the function and its parameters, the question's tags, the pins, the scope and the
limits.

Pins (`Pin`), as JSON: `{"equals": v}`, `{"at_most": n}`, `{"at_least": n}`, `{"prefix": "s"}`, `{"glob": "s*"}`,
`{"one_of": [v, ...]}`. Without pins a grant covers exactly the call asked (every parameter `equals` its value); with
pins it covers the calls of the same function, with the same parameters, whose arguments satisfy every pin, and the
call asked must be one of them. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agent_wait.common.durations import ACCEPTED_FORMS, DurationSyntaxError, format_duration, parse_duration
from agent_wait.errors import GrantError, PolicyError
from agent_wait.people.keys import person_keys
from agent_wait.policy._names import check_names
from agent_wait.policy.pins import Pin

__all__ = (
    "APPROVE",
    "MAX_GRANT_TTL",
    "SCOPES",
    "Call",
    "GrantError",
    "GrantOffer",
    "GrantRequest",
    "GrantTerms",
    "Grants",
    "grant_terms",
)

MAX_GRANT_TTL = timedelta(days=30)
"""The longest any policy may let a grant live: a standing decision nobody looks at again should not outlive a month."""

APPROVE = "approve"
"""The action a grant goes with, and the one it gives the calls it decides (`agent_wait.asking.wait.APPROVE`)."""

Call = tuple[str, Mapping[str, Any]]
"""A `@wait` question's call: the function's name and its arguments as asked."""

SCOPES = ("thread", "agent")
"""Where a grant decides: the thread its question was asked on, or any thread of the agent (this deployment)."""


# -- the policy field ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, init=False)
class Grants:
    """Who may grant when answering a question of this policy, and how far a grant may reach.

    Args:
        max_ttl: the longest a grant lives (ISO 8601 such as 'PT8H', or seconds); at most `MAX_GRANT_TTL`. Required:
            a grant without an end is a policy nobody wrote down.
        max_uses: the most asks one grant may decide; None lets a grant decide any number within its time.
        groups: members of any of these groups may grant; with `people`, only they. Both empty: anyone who may answer
            the question may grant.
        people: these people may grant, by their person key (`agent_wait.people.keys`).
        scopes: where a grant may decide: `"thread"` (the question's thread) and/or `"agent"` (any thread).
        offers: the fixed grants a door without a form offers beside Approve (Teams and email links, Slack's
            buttons), each a `GrantOffer` within these limits; a question is offered only those its call satisfies.
            The inbox, the API and Slack's modal also take any grant within the limits.

    A policy with a quorum of more than one approval takes no grants: a grant is one person's decision, and a quorum
    exists so that no one person decides.

    Example:
        >>> Grants(max_ttl="PT8H", max_uses=20, groups=["finance-leads"]).to_dict()["max_ttl"]
        'PT8H'
    """

    max_ttl: timedelta
    max_ttl_iso: str
    max_uses: int | None
    groups: tuple[str, ...]
    people: tuple[str, ...]
    scopes: tuple[str, ...]
    offers: tuple[GrantOffer, ...]

    def __init__(
        self,
        *,
        max_ttl: str | float,
        max_uses: int | None = None,
        groups: Iterable[str] = (),
        people: Iterable[str] = (),
        scopes: Iterable[str] = SCOPES,
        offers: Iterable[GrantOffer | Mapping[str, Any]] = (),
    ) -> None:
        try:
            ttl = parse_duration(max_ttl)
        except DurationSyntaxError as exc:
            raise PolicyError("grants", max_ttl, f"grants max_ttl must be {ACCEPTED_FORMS}; {exc}") from None
        if not timedelta(0) < ttl <= MAX_GRANT_TTL:
            raise PolicyError(
                "grants",
                max_ttl,
                f"grants max_ttl must be more than 0 and at most P{MAX_GRANT_TTL.days}D; got {max_ttl!r}",
            )
        if max_uses is not None and (isinstance(max_uses, bool) or not isinstance(max_uses, int) or max_uses < 1):
            raise PolicyError(
                "grants", max_uses, f"grants max_uses must be a whole number of 1 or more, or None; got {max_uses!r}"
            )
        checked_scopes = tuple(dict.fromkeys(scopes)) if not isinstance(scopes, str) else (scopes,)
        if not checked_scopes or any(scope not in SCOPES for scope in checked_scopes):
            raise PolicyError("grants", list(checked_scopes), f"grants scopes must name some of {list(SCOPES)}")
        object.__setattr__(self, "max_ttl", ttl)
        object.__setattr__(
            self, "max_ttl_iso", max_ttl.strip().upper() if isinstance(max_ttl, str) else format_duration(ttl)
        )
        object.__setattr__(self, "max_uses", max_uses)
        object.__setattr__(self, "groups", check_names("grants", groups, label="grants groups", spaces=False))
        object.__setattr__(self, "people", check_names("grants", people, label="grants people"))
        object.__setattr__(self, "scopes", checked_scopes)
        checked_offers = tuple(GrantOffer.parse(offer) for offer in offers)
        for offer in checked_offers:
            try:
                _within_limits(offer.request, self)
            except GrantError as exc:
                raise PolicyError("grants", offer.to_dict(), f"grants offer {offer.label!r}: {exc}") from None
        if len({offer.label for offer in checked_offers}) != len(checked_offers):
            raise PolicyError("grants", [o.label for o in checked_offers], "grants offers need distinct labels")
        object.__setattr__(self, "offers", checked_offers)

    def allows(self, *, groups: Iterable[str], names: Iterable[str | None]) -> bool:
        """True when this person may grant: anyone (no groups or people named), or one named by group or key."""
        if not (self.groups or self.people):
            return True
        return bool(set(groups) & set(self.groups)) or bool(person_keys(names) & person_keys(self.people))

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_ttl": self.max_ttl_iso,
            "max_uses": self.max_uses,
            "groups": list(self.groups),
            "people": list(self.people),
            "scopes": list(self.scopes),
            # Only when there are some: the rules ride on every row of the policy's questions.
            **({"offers": [offer.to_dict() for offer in self.offers]} if self.offers else {}),
        }

    @classmethod
    def parse(cls, value: object) -> Grants:
        """A `Grants`, or the dict `to_dict` writes (as it rides in the envelope's `rules`)."""
        if isinstance(value, Grants):
            return value
        known = {"max_ttl", "max_uses", "groups", "people", "scopes", "offers"}
        if isinstance(value, Mapping) and "max_ttl" in value and set(value) <= known:
            return cls(
                max_ttl=value["max_ttl"],
                max_uses=value.get("max_uses"),
                groups=value.get("groups") or (),
                people=value.get("people") or (),
                scopes=value.get("scopes") or SCOPES,
                offers=value.get("offers") or (),
            )
        raise PolicyError(
            "grants",
            value,
            f"grants must be Grants(max_ttl='PT8H', max_uses=..., groups=[...]) or its dict; got {value!r}",
        )


# -- what a person asks for, and what it becomes ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GrantRequest:
    """The `grant` field of an approval: where, for how long, how many uses, and the pins (None: this call exactly)."""

    scope: str
    ttl: timedelta
    uses: int | None
    pins: Mapping[str, Pin] | None = None

    @classmethod
    def parse(cls, value: object) -> GrantRequest:
        """From JSON: `{"scope": "thread", "ttl": "PT1H" | 3600, "uses": 3 | null, "pins": {...} | null}`."""
        if not isinstance(value, Mapping):
            raise GrantError("bad_grant", f"grant must be an object with scope, ttl, uses and pins; got {value!r}")
        unknown = sorted(set(value) - {"scope", "ttl", "uses", "pins"})
        if unknown:
            raise GrantError("bad_grant", f"grant has unknown field(s) {unknown}; it takes scope, ttl, uses and pins")
        scope = value.get("scope", "thread")
        if scope not in SCOPES:
            raise GrantError("bad_grant", f"grant scope must be one of {list(SCOPES)}; got {scope!r}")
        if "ttl" not in value:
            raise GrantError("bad_grant", "grant needs a ttl: how long it decides later asks (e.g. 'PT1H' or 3600)")
        try:
            ttl = parse_duration(value["ttl"])
        except DurationSyntaxError as exc:
            raise GrantError("bad_grant", f"grant ttl must be {ACCEPTED_FORMS}; {exc}") from None
        if ttl <= timedelta(0):
            raise GrantError("bad_grant", f"grant ttl must be more than 0; got {value['ttl']!r}")
        uses = value.get("uses", 1)
        if uses is not None and (isinstance(uses, bool) or not isinstance(uses, int) or uses < 1):
            raise GrantError("bad_grant", f"grant uses must be a whole number of 1 or more, or null; got {uses!r}")
        raw_pins = value.get("pins")
        if raw_pins is not None and not isinstance(raw_pins, Mapping):
            raise GrantError("bad_grant", f"grant pins must be an object of parameter to pin; got {raw_pins!r}")
        pins = None if raw_pins is None else {str(name): Pin.parse(str(name), pin) for name, pin in raw_pins.items()}
        return cls(scope=scope, ttl=ttl, uses=uses, pins=pins)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "ttl": format_duration(self.ttl),
            "uses": self.uses,
            "pins": None if self.pins is None else {name: pin.to_dict() for name, pin in self.pins.items()},
        }


@dataclass(frozen=True, slots=True)
class GrantOffer:
    """A fixed grant a policy offers beside Approve, for doors that show choices rather than a form.

    Args:
        label: what the person reads on the button or link, e.g. "Approve and allow refunds up to 500 for a day".
        request: the grant it makes (`GrantRequest`, or its JSON).

    Example:
        >>> GrantOffer.parse({"label": "Allow for an hour", "ttl": "PT1H", "uses": 3}).request.uses
        3
    """

    label: str
    request: GrantRequest

    @classmethod
    def parse(cls, value: object) -> GrantOffer:
        """A `GrantOffer`, or `{"label": ..., **GrantRequest fields}` as `to_dict` writes it."""
        if isinstance(value, GrantOffer):
            return value
        if not isinstance(value, Mapping) or not isinstance(value.get("label"), str) or not value["label"].strip():
            raise PolicyError(
                "grants", value, "a grants offer is {'label': 'Allow for an hour', 'ttl': 'PT1H', 'uses': ..., ...}"
            )
        fields = {key: item for key, item in value.items() if key != "label"}
        try:
            request = GrantRequest.parse(fields)
        except GrantError as exc:
            raise PolicyError("grants", value, f"grants offer {value['label']!r}: {exc}") from None
        return cls(label=value["label"].strip(), request=request)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, **self.request.to_dict()}


@dataclass(frozen=True, slots=True)
class GrantTerms:
    """Exactly what a grant covers, after every check: a later ask is decided by it only when it asks `function`
    with exactly `parameters`, the same `tags`, on `thread_id` (scope `"thread"`) or any thread (`"agent"`), and its
    arguments satisfy every pin (an exact grant pins every parameter to the value asked)."""

    function: str
    parameters: tuple[str, ...]
    pins: Mapping[str, Pin]
    tags: Mapping[str, str]
    scope: str
    thread_id: str | None
    ttl: timedelta
    uses: int | None

    def covers(self, call: Call | None, *, tags: Mapping[str, str], thread_id: str) -> bool:
        """True when a later ask (its `@wait` call, policy tags and thread) is one this grant decides."""
        if call is None or call[0] != self.function or dict(tags) != dict(self.tags):
            return False
        if self.scope == "thread" and thread_id != self.thread_id:
            return False
        args = call[1]
        return set(args) == set(self.parameters) and all(pin.allows(args[name]) for name, pin in self.pins.items())

    def to_dict(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "parameters": list(self.parameters),
            "pins": {name: pin.to_dict() for name, pin in self.pins.items()},
            "tags": dict(self.tags),
            "scope": self.scope,
            "thread_id": self.thread_id,
            "ttl": format_duration(self.ttl),
            "uses": self.uses,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GrantTerms:
        return cls(
            function=str(data["function"]),
            parameters=tuple(str(name) for name in data["parameters"]),
            pins={str(name): Pin.parse(str(name), pin) for name, pin in dict(data["pins"]).items()},
            tags={str(k): str(v) for k, v in dict(data.get("tags") or {}).items()},
            scope=str(data["scope"]),
            thread_id=data.get("thread_id"),
            ttl=parse_duration(data["ttl"]),
            uses=data.get("uses"),
        )


def grant_terms(
    request: GrantRequest,
    *,
    call: Call | None,
    thread_id: str,
    policy: Any,
    answer: Any,
    groups: Iterable[str] = (),
    names: Iterable[str | None] = (),
) -> GrantTerms:
    """What `request`, made with `answer` to the question asking `call` (`agent_wait.contract.bound_call.wait_call`: the
    function and its arguments, None for a question that is no `@wait` call) under `policy` on `thread_id` by a person
    (their `groups` and person `names`), may cover; a `GrantError` naming the first reason it may not.

    The caller has already decided that this person may answer this question: a grant never reaches further than
    its granter's own answer could.
    """
    grants: Grants | None = getattr(policy, "grants", None)
    if grants is None:
        raise GrantError("grants_off", "this question's policy allows no grants; answer it without one")
    if call is None:
        raise GrantError("not_grantable", "only a @wait function's call can be granted; this question is not one")
    if getattr(policy, "response_schema", None) is not None or APPROVE not in tuple(policy.allowed_actions):
        raise GrantError("not_grantable", "a grant approves later calls; this question cannot be approved")
    if getattr(policy, "quorum", None) is not None and policy.quorum.approvals > 1:
        raise GrantError("not_grantable", "this question needs several approvals, and a grant is one person's")
    if not isinstance(answer, Mapping) or answer.get("action") != APPROVE:
        raise GrantError("bad_grant", "a grant goes with an approval; answer {'action': 'approve', 'grant': {...}}")
    if answer.get("args"):
        raise GrantError("widens", "a grant covers the call as it was asked; approve without edits to grant")
    if not grants.allows(groups=groups, names=names):
        raise GrantError("not_granter", "this question's policy does not let you grant; answer it without a grant")
    _within_limits(request, grants)
    function, args = call
    return GrantTerms(
        function=function,
        parameters=tuple(args),
        pins=_narrowing_pins(request.pins, args),
        tags=dict(policy.tags),
        scope=request.scope,
        thread_id=thread_id if request.scope == "thread" else None,
        ttl=request.ttl,
        uses=request.uses,
    )


def _within_limits(request: GrantRequest, grants: Grants) -> None:
    if request.scope not in grants.scopes:
        raise GrantError(
            "over_limit", f"this policy grants only for {list(grants.scopes)}; got scope {request.scope!r}"
        )
    if request.ttl > grants.max_ttl:
        raise GrantError(
            "over_limit",
            f"this policy lets a grant live at most {grants.max_ttl_iso}; asked for {format_duration(request.ttl)}",
        )
    if grants.max_uses is not None and (request.uses is None or request.uses > grants.max_uses):
        asked = "no limit" if request.uses is None else request.uses
        raise GrantError(
            "over_limit", f"this policy lets a grant decide at most {grants.max_uses} asks; asked for {asked}"
        )


def _narrowing_pins(pins: Mapping[str, Pin] | None, args: Mapping[str, Any]) -> dict[str, Pin]:
    """The pins a grant keeps: `equals` the asked value on every parameter (no pins: this call exactly), or the pins
    asked for. A pin the asked value does not satisfy, or one on a parameter the call does not have, is refused."""
    if pins is None:
        return {name: Pin("equals", value) for name, value in args.items()}
    if not pins:
        raise GrantError(
            "bad_grant", "a pattern needs at least one pin; leave pins null to grant exactly the call asked"
        )
    asked = dict(pins)
    unknown = sorted(set(asked) - set(args))
    if unknown:
        raise GrantError("widens", f"the call has no parameter(s) {unknown}; it takes {sorted(args)}")
    for name, pin in asked.items():
        if not pin.allows(args[name]):
            raise GrantError(
                "widens",
                f"{pin.describe(name)} does not hold for the call asked ({name} is {json.dumps(args[name])}); "
                "a grant may only narrow",
            )
    return asked
