"""AG-UI on the answer API: open questions listed as AG-UI interrupts (`GET /agui/interrupts`) and answered with
AG-UI resume entries (`POST /agui/resume`), through `create_app` with HTTP API v2 events carrying JWT claims."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from ag_ui.core import Interrupt
from tests.support.api_events import Response, call

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.messages import AnswerMessage, parse_message
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import WaitPolicy

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
ALICE = {
    "iss": "https://issuer.example.com",
    "sub": "u-alice",
    "email": "alice@example.com",
    "email_verified": "true",
    "cognito:groups": "[finance]",
}
SECRET = "Zoë-4111-1111-1111-1111"
"""Personal data a client might send; no refusal may echo it."""
REFUND = {"function": "refund", "args": {"order": "A-1", "amount": 900}}
SCHEMA = {
    "type": "object",
    "properties": {"amount": {"type": "integer", "minimum": 0}},
    "required": ["amount"],
    "additionalProperties": False,
}


@dataclass
class Api:
    """The answer API over an in-memory ledger and entry queue, at T0."""

    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    queue: InMemoryEntryQueue = field(default_factory=InMemoryEntryQueue)

    def __post_init__(self) -> None:
        service = AnswerService(self.ledger, self.queue, clock=lambda: T0)
        context = ApiContext(ledger=self.ledger, service=service, clock=lambda: T0)
        self.app = create_app(lambda: context)

    def ask(
        self,
        question_id: str,
        value: Any = None,
        *,
        thread_id: str = "order-1",
        source: dict[str, Any] | None = None,
        asked_at: datetime = T0,
        **policy: Any,
    ) -> str:
        question = Question(
            thread_id,
            question_id,
            REFUND if value is None else value,
            policy=WaitPolicy(**{"timeout": "PT4H", **policy}),
            source=source,
            asked_at=asked_at,
        )
        self.ledger.open(WaitEnvelope.create(question), now=asked_at)
        return question_id

    def interrupts(self, claims: dict[str, Any] | None = ALICE, **query: str) -> Response:
        return call(self.app, "GET", "/agui/interrupts", query=query, claims=claims)

    def resume(self, body: Any, *, key: str | None = None, claims: dict[str, Any] | None = ALICE) -> Response:
        headers = {"Idempotency-Key": key} if key else {}
        return call(self.app, "POST", "/agui/resume", body, headers=headers, claims=claims)

    def record(self, question_id: str) -> Any:
        record = self.ledger.find(question_id)
        assert record is not None
        return record


def resolved(question_id: str, payload: Any) -> dict[str, Any]:
    return {"interruptId": question_id, "status": "resolved", "payload": payload}


def cancelled(question_id: str) -> dict[str, Any]:
    return {"interruptId": question_id, "status": "cancelled"}


@pytest.fixture
def api() -> Api:
    return Api()


# -- listing -------------------------------------------------------------------------------------------------


def test_a_wait_function_question_is_a_tool_approval_whose_schema_is_our_answer(api: Api) -> None:
    # GIVEN an open @wait question about a function call
    api.ask(
        "q-1",
        source={"function": "refund"},
        allowed_actions=("approve", "reject"),
        tags={"team": "finance"},
        allow_edits=True,
    )
    # WHEN an AG-UI client lists the interrupts
    response = api.interrupts()
    # THEN it is one interrupt, every field mapped, in the AG-UI shape
    assert response.status == 200, response.body
    body = response.json()
    assert body["next"] is None
    [interrupt] = body["interrupts"]
    assert interrupt == {
        "id": "q-1",
        "reason": "tool_approval",
        "responseSchema": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["approve", "reject"]},
                "note": {"type": "string"},
                "args": {"type": "object"},
            },
            "required": ["action"],
            "additionalProperties": False,
        },
        "expiresAt": "2030-01-01T13:00:00Z",
        "metadata": {
            "threadId": "order-1",
            "questionId": "q-1",
            "allowedActions": ["approve", "reject"],
            "question": REFUND,
            "source": {"function": "refund"},
            "tags": {"team": "finance"},
            "askedAt": "2030-01-01T09:00:00Z",
            "answerers": None,
        },
    }
    assert Interrupt.model_validate(interrupt).id == "q-1"


def test_a_question_whose_policy_forbids_edits_offers_no_args(api: Api) -> None:
    api.ask("q-1", source={"function": "refund"}, allow_edits=False)
    [interrupt] = api.interrupts().json()["interrupts"]
    assert set(interrupt["responseSchema"]["properties"]) == {"action", "note"}


def test_a_bare_question_asks_for_input_with_its_prompt_and_tool_call(api: Api) -> None:
    # GIVEN a bare question (no source) with a prompt, a tool call id and no deadline
    value = {"title": "ignored, prompt comes first", "prompt": "Ship order A-1?", "tool_call_id": "call_7"}
    api.ask("q-1", value, timeout=None, allowed_actions=("ship", "hold"))
    # WHEN listed
    [interrupt] = api.interrupts().json()["interrupts"]
    # THEN it asks for input, carries the prompt and the tool call id, and has no expiresAt
    assert interrupt["reason"] == "input_required"
    assert interrupt["message"] == "Ship order A-1?"
    assert interrupt["toolCallId"] == "call_7"
    assert "expiresAt" not in interrupt
    assert interrupt["responseSchema"]["properties"] == {
        "action": {"type": "string", "enum": ["ship", "hold"]},
        "note": {"type": "string"},
    }
    assert interrupt["metadata"]["source"] is None
    Interrupt.model_validate(interrupt)


def test_a_string_question_is_its_own_prompt(api: Api) -> None:
    api.ask("q-1", "Ship order A-1?")
    [interrupt] = api.interrupts().json()["interrupts"]
    assert (interrupt["reason"], interrupt["message"]) == ("input_required", "Ship order A-1?")


def test_a_question_with_a_response_schema_offers_that_schema(api: Api) -> None:
    api.ask("q-1", {"question": "How much?"}, response_schema=SCHEMA)
    [interrupt] = api.interrupts().json()["interrupts"]
    assert interrupt["responseSchema"] == SCHEMA
    assert interrupt["message"] == "How much?"
    Interrupt.model_validate(interrupt)


def test_a_langchain_hitl_question_is_a_tool_approval_prompted_by_its_first_request(api: Api) -> None:
    value = {
        "action_requests": [
            {"name": "refund", "args": {"amount": 900}, "description": "Refund 900 on A-1?"},
            {"name": "email", "args": {}, "description": "second"},
        ],
        "review_configs": [{"action_name": "refund", "allowed_decisions": ["approve", "reject"]}],
    }
    # Two requests in one turn: our edit names one call, so the dialect turns edits off (as unpack_question does).
    api.ask("q-1", value, source={"dialect": "langchain_hitl", "tools": ["refund", "email"]}, allow_edits=False)
    [interrupt] = api.interrupts().json()["interrupts"]
    assert (interrupt["reason"], interrupt["message"]) == ("tool_approval", "Refund 900 on A-1?")
    assert "args" not in interrupt["responseSchema"]["properties"]


def test_an_agent_inbox_request_is_prompted_by_its_description_and_offers_our_edit(api: Api) -> None:
    request = {
        "action_request": {"action": "refund", "args": {"amount": 900}},
        "config": {"allow_accept": True, "allow_edit": True, "allow_respond": False, "allow_ignore": False},
        "description": "Refund 900 on A-1?",
    }
    source = {"dialect": "agent_inbox", "tools": ["refund"]}
    api.ask("q-1", [request], source=source, allowed_actions=["accept", "edit"], allow_edits=True)
    [interrupt] = api.interrupts().json()["interrupts"]
    assert (interrupt["reason"], interrupt["message"]) == ("tool_approval", "Refund 900 on A-1?")
    assert interrupt["responseSchema"]["properties"]["args"] == {"type": "object"}
    assert interrupt["responseSchema"]["properties"]["action"]["enum"] == ["accept", "edit"]


def test_only_open_questions_are_listed_soonest_deadline_first_a_page_at_a_time(api: Api) -> None:
    # GIVEN three open questions and one already answered
    api.ask("q-late", timeout="PT8H")
    api.ask("q-soon", timeout="PT1H", tags={"team": "ops"})
    api.ask("q-mid", timeout="PT2H", thread_id="order-2")
    api.ask("q-done")
    assert api.resume({"resume": [resolved("q-done", {"action": "approve"})]}).status == 200
    # WHEN listed two at a time
    first = api.interrupts(limit="2").json()
    second = api.interrupts(limit="2", cursor=first["next"]).json()
    # THEN the open ones come soonest first, and the cursor reaches the rest
    assert [i["id"] for i in first["interrupts"]] == ["q-soon", "q-mid"]
    assert [i["id"] for i in second["interrupts"]] == ["q-late"]
    assert second["next"] is None
    # AND the listing filters as GET /questions does, and by thread
    assert [i["id"] for i in api.interrupts(tag="team:ops").json()["interrupts"]] == ["q-soon"]
    assert [i["id"] for i in api.interrupts(due_before="2030-01-01T11:30:00Z").json()["interrupts"]] == [
        "q-soon",
        "q-mid",
    ]
    assert [i["id"] for i in api.interrupts(thread_id="order-1").json()["interrupts"]] == ["q-soon", "q-late"]
    page = api.interrupts(thread_id="order-1", limit="1").json()
    rest = api.interrupts(thread_id="order-1", limit="1", cursor=page["next"]).json()
    assert [i["id"] for i in page["interrupts"] + rest["interrupts"]] == ["q-soon", "q-late"]
    assert rest["next"] is None


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ({"status": "answered"}, "bad_status"),
        ({"limit": "0"}, "bad_limit"),
        ({"tag": "nocolon"}, "bad_tag"),
        ({"thread_id": "order-1", "cursor": "not-a-cursor"}, "bad_cursor"),
    ],
)
def test_a_bad_listing_query_is_400(api: Api, query: dict[str, str], reason: str) -> None:
    response = api.interrupts(**query)
    assert (response.status, response.json()["reason"]) == (400, reason)


@pytest.mark.parametrize(("method", "path"), [("GET", "/agui/interrupts"), ("POST", "/agui/resume")])
def test_without_jwt_claims_both_routes_are_401(api: Api, method: str, path: str) -> None:
    api.ask("q-1")
    response = call(api.app, method, path, {"resume": [resolved("q-1", {"action": "approve"})]})
    assert (response.status, response.json()["reason"]) == (401, "not_signed_in")
    assert api.record("q-1").status is QuestionStatus.OPEN


# -- resuming --------------------------------------------------------------------------------------------------


def test_a_resolved_entry_decides_with_its_payload_as_sent_and_queues_the_resume(api: Api) -> None:
    # GIVEN an open question
    api.ask("q-1", source={"function": "refund"}, allow_edits=True)
    payload = {"action": "approve", "note": "checked", "args": {"amount": 500}}
    # WHEN an AG-UI client resolves it
    response = api.resume({"resume": [resolved("q-1", payload)]}, key="k-1")
    # THEN the response is POST /questions/{id}/answer's, and the answer is the payload, nothing merged
    assert response.status == 200, response.body
    body = response.json()
    assert (body["result"], body["handed_over"], body["question_id"]) == ("won", True, "q-1")
    record = api.record("q-1")
    assert (record.status, record.answer, record.answered_by, record.via) == (
        QuestionStatus.ANSWERED,
        payload,
        "alice@example.com",
        "api",
    )
    # AND exactly one resume is queued, one the router accepts
    [(message, group_id, dedup)] = api.queue.messages
    parsed = parse_message(message)
    assert isinstance(parsed, AnswerMessage)
    assert (parsed.question_id, parsed.answer, parsed.via, group_id, dedup) == (
        "q-1",
        payload,
        "api",
        "order-1",
        record.answer_id,
    )


def test_the_same_idempotency_key_repeats_and_another_key_finds_it_decided(api: Api) -> None:
    api.ask("q-1")
    body = {"resume": [resolved("q-1", {"action": "approve"})]}
    assert api.resume(body, key="k-1").json()["result"] == "won"
    again = api.resume(body, key="k-1")
    assert (again.status, again.json()["result"]) == (200, "repeated")
    other = api.resume(body, key="k-2")
    assert (other.status, other.json()["reason"]) == (409, "already_decided")
    assert len(api.queue.messages) == 1


def test_a_cancelled_entry_cancels_the_question_and_never_applies_a_default_that_approves(api: Api) -> None:
    # GIVEN a question whose default approves (on main, a cancelled entry applied it: a decline approved)
    api.ask("q-1", default={"action": "approve"})
    # WHEN alice declines it in AG-UI
    response = api.resume({"resume": [cancelled("q-1")]})
    # THEN it is cancelled through the one desk: the agent will get a cancellation, recorded as hers, never approve
    assert (response.status, response.json()["result"]) == (200, "won")
    record = api.record("q-1")
    assert (record.status, record.answered_by, record.reason) == (
        QuestionStatus.CANCELLED,
        "alice@example.com",
        "declined in AG-UI",
    )
    assert record.answer == {"action": "cancelled", "reason": "declined in AG-UI", "by": "alice@example.com"}
    assert len(api.queue.messages) == 1


@pytest.mark.parametrize(
    ("payload", "reason"), [("the order was withdrawn", "the order was withdrawn"), ({"reason": "dup"}, "dup")]
)
def test_a_cancelled_entry_may_say_why_and_needs_no_default(api: Api, payload: Any, reason: str) -> None:
    api.ask("q-1")
    entry = {**cancelled("q-1"), "payload": payload}
    response = api.resume({"resume": [entry]})
    assert (response.status, response.json()["result"]) == (200, "won")
    assert (api.record("q-1").status, api.record("q-1").reason) == (QuestionStatus.CANCELLED, reason)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"action": "delete"}, "action_not_allowed"),
        ({"action": "approve", "args": {"nope": 1}}, "invalid_answer"),
    ],
)
def test_a_payload_the_question_refuses_is_422_and_the_question_stays_open(
    api: Api, payload: dict[str, Any], reason: str
) -> None:
    api.ask("q-1", source={"function": "refund"})
    response = api.resume({"resume": [resolved("q-1", payload)]})
    assert (response.status, response.json()["reason"]) == (422, reason)
    assert api.record("q-1").status is QuestionStatus.OPEN
    assert api.queue.messages == []


def test_a_payload_that_breaks_the_response_schema_is_422_and_one_that_fits_wins(api: Api) -> None:
    api.ask("q-1", {"question": "How much?"}, response_schema=SCHEMA)
    refused = api.resume({"resume": [resolved("q-1", {"amount": -5})]})
    assert (refused.status, refused.json()["reason"]) == (422, "invalid_answer")
    won = api.resume({"resume": [resolved("q-1", {"amount": 5})]})
    assert won.status == 200, won.body
    assert api.record("q-1").answer == {"amount": 5}


@pytest.mark.parametrize("entry", [resolved("q-404", {"action": "approve"}), cancelled("q-404")])
def test_an_unknown_interrupt_is_404(api: Api, entry: dict[str, Any]) -> None:
    response = api.resume({"resume": [entry]})
    assert (response.status, response.json()["reason"]) == (404, "unknown_question")


def test_a_whole_run_agent_input_is_accepted_for_its_resume_list(api: Api) -> None:
    api.ask("q-1")
    run_input = {
        "threadId": "order-1",
        "runId": "run-2",
        "messages": [{"id": "m-1", "role": "user", "content": "approved"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
        "resume": [resolved("q-1", {"action": "approve"})],
    }
    response = api.resume(run_input)
    assert (response.status, response.json()["result"]) == (200, "won")
    assert api.record("q-1").answer == {"action": "approve"}


def test_several_entries_are_applied_each_on_its_own_and_reported_one_by_one(api: Api) -> None:
    # GIVEN three open questions
    for question_id in ("q-1", "q-2", "q-3"):
        api.ask(question_id)
    # WHEN one request resolves the first, sends a refused action for the second, cancels the third
    body = {"resume": [resolved("q-1", {"action": "approve"}), resolved("q-2", {"action": "delete"}), cancelled("q-3")]}
    response = api.resume(body, key="k-1")
    # THEN the status is the first failure's, and each entry says what happened to it
    assert response.status == 422
    [first, second, third] = response.json()["results"]
    assert first == {"interruptId": "q-1", "status": 200, "result": "won"}
    assert (second["interruptId"], second["status"], second["reason"]) == ("q-2", 422, "action_not_allowed")
    assert third == {"interruptId": "q-3", "status": 200, "result": "won"}
    assert "detail" in second
    assert [api.record(q).status for q in ("q-1", "q-2", "q-3")] == [
        QuestionStatus.ANSWERED,
        QuestionStatus.OPEN,
        QuestionStatus.CANCELLED,
    ]
    # AND the same key resent repeats the winner and fixes nothing else
    again = api.resume(
        {"resume": [resolved("q-1", {"action": "approve"}), resolved("q-2", {"action": "reject"})]}, key="k-1"
    )
    assert again.status == 200, again.body
    assert [r["result"] for r in again.json()["results"]] == ["repeated", "won"]
    assert len(api.queue.messages) == 3  # q-1's approval, q-3's cancel, and now q-2's reject


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (f"not json {SECRET}", "not_json"),
        ([SECRET], "bad_resume"),
        ({"resume": []}, "bad_resume"),
        ({"resume": SECRET}, "bad_resume"),
        ({"resume": [{"interruptId": "q-1", "status": SECRET, "payload": SECRET}]}, "bad_resume"),
        ({"resume": [{"status": "resolved", "payload": {"action": SECRET}}]}, "bad_resume"),
        ({"resume": [resolved("q-1", {"action": "approve"})], "note": SECRET}, "bad_resume"),
        ({"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": SECRET}], "resume": []}, "bad_resume"),
        ({"resume": [resolved("q-1", {"action": "approve"}), resolved("q-1", {"action": SECRET})]}, "bad_resume"),
        ({"resume": [resolved("q-1", {"action": "approve", "note": SECRET * 4000})]}, "bad_answer"),
        ({"resume": [resolved(f"q-{n}", {"action": SECRET}) for n in range(101)]}, "too_many_entries"),
    ],
    ids=[
        "not-json",
        "not-an-object",
        "no-entries",
        "resume-not-a-list",
        "bad-status",
        "no-interrupt-id",
        "unknown-field",
        "bad-run-input",
        "same-interrupt-twice",
        "payload-too-large",
        "over-100-entries",
    ],
)
def test_a_malformed_body_is_refused_names_no_value_and_changes_nothing(api: Api, body: Any, reason: str) -> None:
    api.ask("q-1")
    response = api.resume(body, key="k-1")
    problem = response.json()
    # An answer no store can hold is unprocessable (422), as in every door; a malformed body is a bad request.
    assert (response.status, problem["reason"]) == (422 if reason == "bad_answer" else 400, reason), response.body
    assert SECRET not in response.body
    assert api.record("q-1").status is QuestionStatus.OPEN
    assert api.queue.messages == []


def test_a_wrong_shape_names_the_fields_that_are_wrong(api: Api) -> None:
    body = {"resume": [{"interruptId": "q-1", "status": SECRET}, {"status": "resolved"}]}
    detail = api.resume(body).json()["detail"]
    assert "resume.0.status (literal_error)" in detail
    assert "resume.1.interruptId (missing)" in detail


@pytest.mark.parametrize("entry", [resolved("q-1", {"action": "approve"}), cancelled("q-1")])
def test_an_entry_after_the_deadline_is_410_even_a_cancel_without_a_default(api: Api, entry: dict[str, Any]) -> None:
    api.ask("q-1", asked_at=T0 - timedelta(hours=5))
    response = api.resume({"resume": [entry]})
    assert (response.status, response.json()["reason"]) == (410, "expired")
    assert json.loads(response.body)["question"]["status"] == "open"


# -- quorum questions: each resume entry is a vote ---------------------------------------------------------------

BOB = {
    "iss": "https://issuer.example.com",
    "sub": "u-bob",
    "email": "bob@example.com",
    "email_verified": "true",
    "cognito:groups": "[finance]",
}


def test_a_quorum_interrupt_carries_its_votes_so_far_and_how_many_more_it_needs(api: Api) -> None:
    # GIVEN a question that needs two approvals, one cast already
    api.ask("q-1", allowed_actions=("approve", "reject"), quorum=2)
    api.resume({"resume": [resolved("q-1", {"action": "approve", "note": SECRET})]}, claims=BOB)
    # WHEN an AG-UI client lists the interrupts
    [interrupt] = api.interrupts().json()["interrupts"]
    # THEN its metadata shows who voted what and when (never a note), and that one more approval is needed
    assert interrupt["metadata"]["quorum"] == {
        "votes": [{"by": "bob@example.com", "action": "approve", "at": "2030-01-01T09:00:00Z"}],
        "approvals": 1,
        "needed": 2,
        "remaining": 1,
        "veto": ["reject"],
    }
    assert SECRET not in json.dumps(interrupt)


def test_a_resume_entry_on_a_quorum_question_is_a_vote_202_until_the_quorum_decides(api: Api) -> None:
    api.ask("q-1", allowed_actions=("approve", "reject"), quorum=2)

    first = api.resume({"resume": [resolved("q-1", {"action": "approve"})]}, key="k-a")
    second = api.resume({"resume": [resolved("q-1", {"action": "approve"})]}, key="k-b", claims=BOB)

    assert (first.status, first.json()["result"], first.json()["remaining"]) == (202, "voted", 1)
    assert first.json()["your_vote"]["action"] == "approve"
    assert (second.status, second.json()["result"], second.json()["status"]) == (200, "won", "answered")
    assert api.record("q-1").status is QuestionStatus.ANSWERED


def test_a_second_resume_by_the_same_person_on_a_quorum_question_is_409_already_voted(api: Api) -> None:
    # GIVEN alice approved a quorum question
    api.ask("q-1", allowed_actions=("approve", "reject"), quorum=2, default={"action": "reject"})
    api.resume({"resume": [resolved("q-1", {"action": "approve"})]}, key="k-a")
    version = api.record("q-1").progress.version

    # WHEN she resolves it again under another key
    again = api.resume({"resume": [resolved("q-1", {"action": "reject"})]}, key="k-b")
    # THEN it is her second vote: refused, and nothing changes
    assert (again.status, again.json()["reason"]) == (409, "already_voted")
    assert api.record("q-1").status is QuestionStatus.OPEN
    assert api.record("q-1").progress.version == version
    assert [vote.action for vote in api.record("q-1").progress.votes] == ["approve"]


def test_a_cancelled_entry_on_a_quorum_question_whose_default_approves_cancels_it_never_approves(api: Api) -> None:
    # GIVEN a two-person quorum whose default approves, alice's approval recorded
    api.ask("q-1", allowed_actions=("approve", "reject"), quorum=2, default={"action": "approve"})
    api.resume({"resume": [resolved("q-1", {"action": "approve"})]}, key="k-a")
    # WHEN bob declines it in AG-UI
    response = api.resume({"resume": [cancelled("q-1")]}, key="k-b", claims=BOB)
    # THEN the question is cancelled, as a cancel through the API would: no second approval met the quorum
    assert (response.status, response.json()["result"]) == (200, "won")
    record = api.record("q-1")
    assert record.status is QuestionStatus.CANCELLED
    assert record.answer["action"] == "cancelled"


def test_several_entries_report_a_recorded_vote_as_applied_with_what_it_still_needs(api: Api) -> None:
    api.ask("q-1", allowed_actions=("approve", "reject"), quorum=2)
    api.ask("q-2")

    response = api.resume({"resume": [resolved("q-1", {"action": "approve"}), resolved("q-2", {"action": "approve"})]})

    assert response.status == 200, response.body
    assert response.json()["results"] == [
        {"interruptId": "q-1", "status": 202, "result": "voted", "remaining": 1},
        {"interruptId": "q-2", "status": 200, "result": "won"},
    ]
