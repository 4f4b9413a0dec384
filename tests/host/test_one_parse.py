"""One reading of an answer for every door: the same hostile values get the same refusal, and the question stays open.

`agent_wait.contract.messages.parse_answer` is the one parse: exact integers of at most 64 bits, no NaN or Infinity,
nesting of at most `MAX_DEPTH` levels, at most `MAX_ANSWER_BYTES`, and no control characters but tab and line breaks.
The answer API (`POST /questions/{id}/answer`), its bulk route (`POST /questions/answers`), AG-UI (`POST /agui/resume`)
and the signed-link page (`POST /questions/{id}/link/answer`, whose only free value is the note) each run it before
the desk and refuse with `422 bad_answer`; an edited argument its annotation refuses is the desk's
`422 invalid_answer`, in every door. The Slack form runs the same parse (tests/announce/test_slack_door.py).

Each test drives the router on a LangGraph graph whose `@wait` call allows edits (`amount: int`, 1 to 10,000),
and the answer API's routes (`create_app`) with a signed-in person's JWT claims, over one in-memory ledger.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
import tests.agents.graphs as graphs
from langgraph.checkpoint.memory import InMemorySaver
from tests.support.api_events import Response, call

from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryDeadLetter, InMemoryEntryQueue, Router
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeys, mint_token
from agent_wait.langgraph import LangGraphAdapter
from agent_wait.ledger import InMemoryLedger

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
ALICE = {"iss": "https://issuer.example.com", "sub": "u-alice", "email": "alice@example.com", "email_verified": "true"}
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k1-secret-" + "a" * 40}))


def _nested(depth: int, opening: str, closing: str) -> str:
    return opening * depth + "1" + closing * depth


def _edit(amount: str) -> str:
    """An approval that edits the amount to `amount` (JSON text)."""
    return '{"action": "approve", "args": {"amount": ' + amount + "}}"


HOSTILE: dict[str, tuple[str, str]] = {
    # name: (the answer as JSON text, the refusal's reason)
    # An exact 64-bit integer, over the parameter's maximum: the desk's check, never a rounded float.
    "int-20-digits": (_edit("12345678901234567891"), "invalid_answer"),
    "int-20-digits-negative": (_edit("-12345678901234567891"), "bad_answer"),
    "int-23-digits": (_edit("12345678901234567890123"), "bad_answer"),
    "nan": (_edit("NaN"), "bad_answer"),
    "infinity": (_edit("Infinity"), "bad_answer"),
    "infinity-negative": (_edit("-Infinity"), "bad_answer"),
    "nested-2000-lists": (_edit(_nested(2000, "[", "]")), "bad_answer"),
    "nested-2000-objects": (_edit(_nested(2000, '{"a": ', "}")), "bad_answer"),
    "300-kb": (json.dumps({"action": "approve", "note": "x" * 300_000}), "bad_answer"),
    "control-nul": (json.dumps({"action": "approve", "note": "ok\u0000then"}), "bad_answer"),
    "control-escape": (json.dumps({"action": "approve", "note": "\u001b[2J\u001b[31mAPPROVED"}), "bad_answer"),
    "float-for-an-int": (_edit("900.5"), "invalid_answer"),
}
"""The twelve hostile values of issue 40; the nested object's innermost value is `1` under a key."""
TEXT_ONLY = ("300-kb", "control-nul", "control-escape")
"""The ones a signed link can carry: its only free value is the note, a text."""


@dataclass
class World:
    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    queue: InMemoryEntryQueue = field(default_factory=InMemoryEntryQueue)

    def __post_init__(self) -> None:
        self.router = Router(
            LangGraphAdapter(graphs.build_editable_graph(InMemorySaver())),
            self.ledger,
            dead_letter=InMemoryDeadLetter(),
            clock=lambda: T0,
        )
        service = AnswerService(self.ledger, self.queue, clock=lambda: T0)
        self.app = create_app(lambda: ApiContext(ledger=self.ledger, service=service, link_keys=KEYS, clock=lambda: T0))

    def ask(self) -> tuple[str, str]:
        thread = f"t-{uuid.uuid4().hex[:10]}"
        body = {"thread_id": thread, "input": {"order_id": thread, "amount": 900}, "start_id": thread}
        (question_id,) = self.router.handle(json.dumps(body)).asked
        return thread, question_id

    def send(self, door: str, thread: str, question_id: str, answer: str) -> Response:
        """`answer` (JSON text, as a client may send it) through `door`."""
        if door == "api":
            return call(self.app, "POST", f"/questions/{question_id}/answer", f'{{"answer": {answer}}}', claims=ALICE)
        if door == "bulk":
            body = f'{{"answers": [{{"question_id": "{question_id}", "answer": {answer}}}]}}'
            return call(self.app, "POST", "/questions/answers", body, claims=ALICE)
        if door == "agui":
            entry = f'{{"interruptId": "{question_id}", "status": "resolved", "payload": {answer}}}'
            return call(self.app, "POST", "/agui/resume", f'{{"resume": [{entry}]}}', claims=ALICE)
        token = mint_token(
            KEYS,
            question_id=question_id,
            thread_id=thread,
            action="approve",
            expires_at=T0 + timedelta(hours=1),
            now=T0,
        )
        note = json.loads(answer)["note"]
        return call(self.app, "POST", f"/questions/{question_id}/link/answer", {"token": token, "note": note})


def refusal(reply: Response) -> tuple[int, str | None]:
    """The status and reason a door refused with; for bulk, its one item's (the request itself is 200)."""
    body = reply.json()
    if reply.status == 200 and "results" in body:
        (item,) = body["results"]
        return item["status"], item["body"].get("reason")
    return reply.status, body.get("reason")


CASES = [
    (door, name) for door in ("api", "bulk", "agui", "link") for name in HOSTILE if door != "link" or name in TEXT_ONLY
]


@pytest.mark.parametrize(("door", "name"), CASES, ids=[f"{door}-{name}" for door, name in CASES])
def test_every_door_refuses_a_hostile_answer_the_same_way_and_the_question_stays_open(door: str, name: str) -> None:
    # GIVEN a refund parked on an approver's question whose amount may be edited (a whole number)
    world = World()
    thread, question_id = world.ask()
    answer, reason = HOSTILE[name]

    # WHEN the hostile answer comes through the door
    reply = world.send(door, thread, question_id, answer)

    # THEN the door refuses it as every door does: 422 with the reason, saying where and never echoing the value
    assert refusal(reply) == (422, reason), reply.body[:500]
    assert "12345678901234567891" not in reply.body
    assert "APPROVED" not in reply.body
    # AND nothing was decided, handed over or run: a corrected answer may still win
    assert world.ledger.find(question_id).status is QuestionStatus.OPEN  # type: ignore[union-attr]
    assert world.queue.messages == []
    assert graphs.body_runs(thread) == 0
