"""The channel conformance suite: every channel held to the channel contract (`agent_wait.channels.contract`).

A channel opts in with one harness, and the same rules run on every channel:

    from agent_wait.testing import channel_contract

    @pytest.mark.parametrize("rule", channel_contract.RULES, ids=lambda rule: rule.__name__)
    def test_my_channel_conforms(rule):
        rule(lambda: ChannelHarness(MY_CHANNEL, announcer=make_announcer, record=make_record, door=make_door))

What the rules check, for each declared channel:

- its declaration names every part, each a part or `Absent` with a reason, and the harness tests what it declares;
- its announcer is the declared class and passes the announcer contract (`announce_contract`, every rule);
- its preview renders each transition the announcer delivers, well formed and static for its media type, and
  says what the announcer sends: something where it renders, nothing where it says None;
- a declared door refuses an unsigned request, one signed with another secret and a body its signature is not
  for, deciding nothing; a genuine request decides through the answer service, once, and one sent again keeps its
  answer id (so it repeats its outcome);
- a declared record claims once: a second claim returns the first, its marks show on later reads and claims, and
  two questions' entries stay apart.

Each rule is a plain function of a harness factory (fresh state per call); a rule for a part the channel declares
`Absent` returns without asserting. Standard library only.
"""

from __future__ import annotations

import dataclasses
import html.parser
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_wait.channels.announce.base import BaseAnnounce
from agent_wait.channels.contract import Absent, Channel, ChannelRecord, Door, DoorHandler, RecordKind, Rendered
from agent_wait.channels.publish import publish
from agent_wait.contract.envelope import Transition, WaitEnvelope
from agent_wait.testing import announce_contract
from agent_wait.testing.announce_contract import FOLLOW_UPS, AnnouncerFactory, held_for, sample_envelope

__all__ = ("RULES", "ChannelFactory", "ChannelHarness", "DoorHarness")


@dataclass
class DoorHarness:
    """A channel's door over a question store, and the requests its service sends when a person answers."""

    make: Callable[[Any], DoorHandler]
    """The door, deciding through the answer service it is given."""
    service: Any
    """The answer service over the harness's store (the suite hands the door a counting wrapper of it)."""
    ask: Callable[[], str]
    """Opens a question a person may answer through the door now; returns its id."""
    request: Callable[..., tuple[str, dict[str, str]]]
    """`(question_id, action, *, secret=None) -> (body, headers)`: what the channel's service sends when a person
    answers `action`, signed with the door's own secret (or with `secret`)."""
    signature_headers: tuple[str, ...]
    """The headers (lower-case) that carry the request's signature."""
    decided: Callable[[str], bool]
    """Whether the question is decided."""


@dataclass
class ChannelHarness:
    """A declared channel and what exercises each part it declares."""

    channel: Channel
    announcer: AnnouncerFactory
    """`(delivers=None) -> AnnounceHarness` for the channel's announcer (`announce_contract`); its `read_back` returns
    everything the backend took so far (reading consumes nothing)."""
    record: Callable[[], ChannelRecord[Any]] | None = None
    """A fresh backend of its record; None for a channel that declares none."""
    door: Callable[[], DoorHarness] | None = None
    """Its door over a fresh store; None for a channel that declares none."""


ChannelFactory = Callable[[], ChannelHarness]

# -- the declaration -------------------------------------------------------------------------------------------------


def declares_every_part(make: ChannelFactory) -> None:
    """The declaration names the channel as its announcer does and gives each part, or `Absent` with a reason; the
    harness exercises exactly the door and the record it declares."""
    harness = make()
    channel = harness.channel
    assert isinstance(channel, Channel), f"expected a Channel, got {type(channel).__name__}"
    assert isinstance(channel.announcer, type), f"{channel.name}: its announcer must be a class"
    assert issubclass(channel.announcer, BaseAnnounce), f"{channel.name}: its announcer must derive from BaseAnnounce"
    assert channel.name == channel.announcer.name, (
        f"the channel is named {channel.name!r} but its announcer calls itself {channel.announcer.name!r}"
    )
    assert callable(channel.preview), f"{channel.name}: a preview is required"
    for part in ("build", "door", "record"):
        value = getattr(channel, part)
        if isinstance(value, Absent):
            assert value.reason.strip(), f"{channel.name}: an absent {part} must say why"
    assert callable(channel.build) or isinstance(channel.build, Absent), f"{channel.name}: build must be callable"
    if isinstance(channel.door, Door):
        assert callable(getattr(channel.door.handler, "handle", None)), f"{channel.name}: its door handles no request"
        assert callable(channel.door.build), f"{channel.name}: its door has no builder"
    else:
        assert isinstance(channel.door, Absent), f"{channel.name}: door must be a Door or Absent"
    if isinstance(channel.record, RecordKind):
        _check_kind(channel.name, channel.record)
    else:
        assert isinstance(channel.record, Absent), f"{channel.name}: record must be a RecordKind or Absent"
    assert (harness.door is not None) == isinstance(channel.door, Door), (
        f"{channel.name}: the harness must exercise its door exactly when it declares one"
    )
    assert (harness.record is not None) == isinstance(channel.record, RecordKind), (
        f"{channel.name}: the harness must exercise its record exactly when it declares one"
    )


def _check_kind(name: str, kind: RecordKind[Any]) -> None:
    assert dataclasses.is_dataclass(kind.entry), f"{name}: a record entry must be a dataclass"
    fields = {field.name for field in dataclasses.fields(kind.entry)}
    assert {"key", "claimed_at"} <= fields, f"{name}: a record entry needs `key` and `claimed_at`; has {fields}"
    assert set(kind.marks) <= fields, f"{name}: marks {kind.marks} are not all fields of {kind.entry.__name__}"
    assert kind.prefix.endswith(":"), f"{name}: a record prefix ends with ':', got {kind.prefix!r}"


def announcer_is_the_declared_one(make: ChannelFactory) -> None:
    """The harness's announcer is an instance of the declared class."""
    harness = make()
    announcer = harness.announcer().announcer
    assert isinstance(announcer, harness.channel.announcer), (
        f"{harness.channel.name}: expected a {harness.channel.announcer.__name__}, got {type(announcer).__name__}"
    )


def _on_announcer(rule: Callable[[AnnouncerFactory], None]) -> Callable[[ChannelFactory], None]:
    def check(make: ChannelFactory) -> None:
        rule(make().announcer)

    check.__name__ = check.__qualname__ = f"announcer_{rule.__name__}"
    check.__doc__ = f"The announcer contract: {rule.__doc__}"
    return check


ANNOUNCER_RULES = tuple(_on_announcer(rule) for rule in (*announce_contract.REQUIRED, *announce_contract.OPTIONAL))
"""Every rule of the announcer contract, run on the channel's announcer (capabilities as its harness claims)."""

# -- the preview -------------------------------------------------------------------------------------------------------

_ORDER = (
    Transition.CREATED,
    Transition.VOTED,
    Transition.REMINDER,
    Transition.ESCALATED,
    Transition.EXTENDED,
    Transition.ANSWERED,
    Transition.EXPIRED,
    Transition.CANCELLED,
    Transition.FAILED,
    Transition.RESUMED,
)
_PROGRESS = dict(FOLLOW_UPS)


def _step(envelope: WaitEnvelope, step: Transition) -> WaitEnvelope:
    """`envelope`'s question at `step`, with the `progress` that step's envelope carries."""
    return envelope if step is Transition.CREATED else envelope.for_transition(step, progress=_PROGRESS.get(step))


def preview_renders_each_delivered_transition(make: ChannelFactory) -> None:
    """For each transition the announcer delivers, the preview renders what is sent, well formed for its media type
    (a page is static: no script), or None where nothing is sent; a question's first envelope always renders."""
    harness = make()
    channel, announcer = harness.channel, harness.announcer().announcer
    envelope = sample_envelope()
    for step in (step for step in _ORDER if step in announcer.delivers):
        shown = channel.preview(announcer, _step(envelope, step))
        if shown is None:
            assert step is not Transition.CREATED, f"{channel.name}: the preview of a new question rendered nothing"
            continue
        assert isinstance(shown, Rendered), f"{channel.name}: a preview is a Rendered or None, got {shown!r}"
        problem = _malformed(shown)
        assert problem is None, f"{channel.name} {step.event_type}: {problem}"


def preview_says_what_the_announcer_sends(make: ChannelFactory) -> None:
    """Delivering a transition sends something exactly where the preview renders something (each on a question of
    its own, asked first): a preview never shows what nobody gets, nor hides what is sent."""
    harness = make()
    channel, made = harness.channel, harness.announcer()
    announcer = made.announcer
    for step in (step for step in _ORDER if step in announcer.delivers):
        envelope = sample_envelope()
        if step is not Transition.CREATED:
            assert publish(envelope, announcer).ok, f"{channel.name}: wait.created did not deliver"
        before = len(held_for(made, envelope))
        current = _step(envelope, step)
        report = publish(current, announcer)
        assert report.ok, f"{channel.name} {step.event_type}: expected delivery, got {report.deliveries!r}"
        sent = len(held_for(made, envelope)) - before
        if channel.preview(announcer, current) is None:
            assert sent == 0, f"{channel.name} {step.event_type}: the preview shows nothing, but {sent} were sent"
        else:
            assert sent > 0, f"{channel.name} {step.event_type}: the preview shows a message, but none was sent"


def _malformed(shown: Rendered) -> str | None:
    """Why `shown` is not what its media type says, or None."""
    if not shown.body.strip():
        return "the preview is empty"
    kind = shown.media_type.split(";")[0].strip()
    if kind == "application/json" or kind.endswith("+json"):
        try:
            json.loads(shown.body)
        except ValueError as exc:
            return f"{kind} that does not parse: {exc}"
        return None
    if kind == "text/html":
        page = _Page()
        page.feed(shown.body)
        page.close()
        if page.scripts:
            return "a previewed page runs no script, but it has a <script> element"
        return None if "".join(page.text).strip() else "a page with no text"
    return None if kind == "text/plain" else f"an unknown media type {shown.media_type!r}"


class _Page(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.scripts += tag == "script"

    def handle_data(self, data: str) -> None:
        self.text.append(data)


# -- the door --------------------------------------------------------------------------------------------------------


class _CountingService:
    """The harness's answer service, counting what the door asks of it."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.answers: list[tuple[str, Any]] = []
        """`(question_id, answer_id)` of every `answer` call, in order."""

    def answer(self, question_id: str, *args: Any, **kwargs: Any) -> Any:
        self.answers.append((question_id, kwargs.get("answer_id")))
        return self.service.answer(question_id, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)


@dataclass
class _AtDoor:
    """A door deciding through a counting answer service, and a question open for it."""

    door: DoorHarness
    service: _CountingService
    handler: DoorHandler
    question: str

    def refuses(self, body: str, headers: dict[str, str]) -> None:
        reply = self.handler.handle(body, headers)
        assert 400 <= reply.status < 500, f"a forged request must be refused (4xx), got {reply.status}"
        assert self.service.answers == [], f"a refused request reached the answer service: {self.service.answers}"
        assert not self.door.decided(self.question), "a refused request decided the question"


def _at_door(make: ChannelFactory) -> _AtDoor | None:
    harness = make()
    if harness.door is None:
        return None
    door = harness.door()
    service = _CountingService(door.service)
    return _AtDoor(door, service, door.make(service), door.ask())


def door_refuses_an_unsigned_request(make: ChannelFactory) -> None:
    """A request without its signature headers is refused, and nothing is decided."""
    at = _at_door(make)
    if at is None:
        return
    body, headers = at.door.request(at.question, "approve")
    at.refuses(body, {name: value for name, value in headers.items() if name.lower() not in at.door.signature_headers})


def door_refuses_a_request_signed_with_another_secret(make: ChannelFactory) -> None:
    """A request signed with a secret other than the door's is refused, and nothing is decided."""
    at = _at_door(make)
    if at is not None:
        at.refuses(*at.door.request(at.question, "approve", secret="not-the-door-secret-0123456789"))


def door_refuses_a_body_its_signature_is_not_for(make: ChannelFactory) -> None:
    """A genuine signature over another body (approve's headers on reject's body) is refused, deciding nothing."""
    at = _at_door(make)
    if at is None:
        return
    _, headers = at.door.request(at.question, "approve")
    body, _ = at.door.request(at.question, "reject")
    at.refuses(body, headers)


def door_decides_through_the_answer_service(make: ChannelFactory) -> None:
    """A genuine request decides the question through the answer service, in one call for that question."""
    at = _at_door(make)
    if at is None:
        return
    reply = at.handler.handle(*at.door.request(at.question, "approve"))
    assert reply.status < 400, f"a genuine request must be taken, got {reply.status}"
    asked = [question for question, _ in at.service.answers]
    assert asked == [at.question], f"expected one answer call for the question, got {at.service.answers}"
    assert at.door.decided(at.question), "the answer service was asked, but the question is not decided"


def door_repeats_a_request_sent_again(make: ChannelFactory) -> None:
    """The same request sent again reaches the answer service with the same answer id, so it repeats its outcome
    and never decides twice."""
    at = _at_door(make)
    if at is None:
        return
    request = at.door.request(at.question, "approve")
    first, again = at.handler.handle(*request), at.handler.handle(*request)
    assert again.status == first.status, f"a request sent again answered {again.status}, the first {first.status}"
    ids = [answer_id for _, answer_id in at.service.answers]
    assert len(ids) == 2, f"expected two calls of the answer service, got {ids}"
    assert ids[0], "the door must give each answer an id"
    assert ids[0] == ids[1], f"a request sent again must keep its answer id: {ids}"


# -- the record ------------------------------------------------------------------------------------------------------

CLAIMED_AT = "2026-09-11T09:00:00Z"
LATER = "2026-09-11T09:05:00Z"


def _entry(kind: RecordKind[Any], key: str, claimed_at: str = CLAIMED_AT) -> Any:
    """An entry of `kind` with every field it needs: `key`, `claimed_at`, and sample text for the rest."""
    needed = {
        field.name: f"{field.name}-1"
        for field in dataclasses.fields(kind.entry)
        if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    }
    return kind.entry(**{**needed, "key": key, "claimed_at": claimed_at})


def _record(make: ChannelFactory) -> tuple[ChannelRecord[Any], RecordKind[Any]] | None:
    harness = make()
    if harness.record is None or not isinstance(harness.channel.record, RecordKind):
        return None
    record = harness.record()
    assert record.kind is harness.channel.record, f"{harness.channel.name}: the record keeps another kind of entry"
    return record, harness.channel.record


def record_claims_once(make: ChannelFactory) -> None:
    """The first claim of a key claims it (None); a second claim returns the first, its claim time kept."""
    found = _record(make)
    if found is None:
        return
    record, kind = found
    first = _entry(kind, "created:ana@example.com")
    assert record.claim("q-1", first) is None, "the first claim of a key must claim it"
    again = record.claim("q-1", _entry(kind, "created:ana@example.com", LATER))
    assert again == first, f"a second claim must return the first, got {again!r}"


def record_marks_what_the_service_gave(make: ChannelFactory) -> None:
    """A mark shows on the entry read back and on a later claim of its key; the other entries are untouched."""
    found = _record(make)
    if found is None:
        return
    record, kind = found
    first, other = _entry(kind, "message:one"), _entry(kind, "message:two")
    record.claim("q-1", first)
    record.claim("q-1", other)
    marks = {name: f"{name}-given" for name in kind.marks}
    record.mark("q-1", first.key, **marks)
    marked = dataclasses.replace(first, **marks)
    assert record.read("q-1") == {first.key: marked, other.key: other}, f"read back {record.read('q-1')!r}"
    assert record.claim("q-1", _entry(kind, first.key, LATER)) == marked, "a later claim must see the mark"


def record_keeps_questions_apart(make: ChannelFactory) -> None:
    """The same key on two questions is two entries; a question with none reads back empty."""
    found = _record(make)
    if found is None:
        return
    record, kind = found
    record.claim("q-1", _entry(kind, "created:ana@example.com"))
    assert record.claim("q-2", _entry(kind, "created:ana@example.com", LATER)) is None, "q-2's key is its own"
    assert list(record.read("q-2").values()) == [_entry(kind, "created:ana@example.com", LATER)]
    assert record.read("q-3") == {}, "a question with no entry reads back empty"


RULES: tuple[Callable[[ChannelFactory], None], ...] = (
    declares_every_part,
    announcer_is_the_declared_one,
    *ANNOUNCER_RULES,
    preview_renders_each_delivered_transition,
    preview_says_what_the_announcer_sends,
    door_refuses_an_unsigned_request,
    door_refuses_a_request_signed_with_another_secret,
    door_refuses_a_body_its_signature_is_not_for,
    door_decides_through_the_answer_service,
    door_repeats_a_request_sent_again,
    record_claims_once,
    record_marks_what_the_service_gave,
    record_keeps_questions_apart,
)
"""Every rule; a rule about a part a channel declares `Absent` returns without asserting."""
RECORD_RULES = (record_claims_once, record_marks_what_the_service_gave, record_keeps_questions_apart)
"""The rules on a record alone (any backend of a declared record kind)."""
