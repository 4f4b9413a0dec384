"""The answer API served locally over real HTTP: API Gateway's JWT authorizer, the real routes, the real router.

A `EmulatedStack` of the refund stack serves the API on 127.0.0.1 beside the emulator. Its router runs
`local_api_graph` (the refund agent, finance only), so one stack shows every outcome: 401 from the
authorizer, 200 for finance then exactly one resume, 409 naming the winner, 410 after the deadline,
422 for an action not allowed, 403 outside finance. Requests go through urllib, as curl would send them.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import jwt
import pytest
from _http import Reply, call
from examples.refund_agent.demo import MovableClock, count_refunds

from agent_wait.cli import main
from agent_wait.cli._target import LOCAL_STATE, Target
from agent_wait.local.stack import EmulatedStack

LARGE = 900
"""Over the refund's auto-approve limit: finance is asked."""


@dataclass
class Api:
    """The running stack, its clock, and shortcuts for what the tests do over and over."""

    local: EmulatedStack
    clock: MovableClock

    @property
    def url(self) -> str:
        return self.local.api_url

    def token(self, user: str = "alice@example.com", groups: tuple[str, ...] = ("finance",), **kwargs: Any) -> str:
        return self.local.issuer.token(user, groups, **kwargs)

    def start(self, amount: int = LARGE) -> tuple[str, str]:
        """Start a refund through the entry queue and let the router run it; (thread, question id)."""
        thread = f"order-api-{uuid.uuid4().hex[:8]}"
        self.local.send(
            {"thread_id": thread, "input": {"order_id": thread, "amount": amount}, "start_id": uuid.uuid4().hex},
            deduplication_id=uuid.uuid4().hex,
        )
        asked = [q for outcome in self.local.pump().outcomes for q in outcome.asked]
        assert len(asked) == 1, f"expected the refund to ask finance once, got {asked}"
        return thread, asked[0]

    def answer(self, question: str, action: str, *, token: str | None, key: str | None = None) -> Reply:
        headers = {"Idempotency-Key": key} if key else None
        return call(
            f"{self.url}/questions/{question}/answer",
            method="POST",
            token=token,
            body={"answer": {"action": action}},
            headers=headers,
        )

    def status(self, question: str) -> str:
        reply = call(f"{self.url}/questions/{question}", token=self.token())
        assert reply.status == 200, reply
        return reply.body["status"]

    def refunds(self, order_id: str) -> int:
        return count_refunds(self.local, order_id)


# -- `agent-wait dev` (first: it runs its own EmulatedStack, and only one may run in a process at a time) ------------


def test_dev_serves_the_api_and_prints_a_curl_line_that_works(
    refund_template: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_wait.cli._dev import run_dev

    # GIVEN `agent-wait dev` running
    monkeypatch.chdir(tmp_path)
    out, stop = io.StringIO(), threading.Event()
    status: list[int] = []
    server = threading.Thread(target=lambda: status.append(run_dev(lambda: refund_template, out=out, stop=stop)))
    server.start()
    try:
        deadline = time.monotonic() + 120
        while "curl" not in out.getvalue() and server.is_alive() and time.monotonic() < deadline:
            time.sleep(0.2)
        printed = out.getvalue()
        state = json.loads(LOCAL_STATE.read_text())
        # WHEN the printed curl line is run
        found = re.search(r"curl -s -H 'Authorization: Bearer ([\w.-]+)' (http://127\.0\.0\.1:\d+)/questions", printed)
        assert found, f"no curl line in:\n{printed}"
        token, api_url = found.groups()
        reply = call(f"{api_url}/questions", token=token)
        # THEN it lists questions, and the state file names the API and its issuer for the CLI
        assert reply.status == 200, reply
        assert reply.body["questions"] == []
        assert f"answer API   {api_url}" in printed
        assert f"inbox        {api_url}/inbox" in printed
        assert f"{api_url.replace('127.0.0.1', 'localhost')}/inbox  (the same, where passkeys work" in printed
        assert (state["api_url"], state["issuer"]) == (api_url, api_url)
        # AND `agent-wait token` signs in through it (as from another terminal: the state file, not this env)
        capsys.readouterr()
        with monkeypatch.context() as env:
            env.delenv("AGENT_WAIT_QUEUE_URL")
            env.delenv("AGENT_WAIT_TABLE")
            assert main(["token", "--user", "carol@example.com", "--groups", "finance,ops"]) == 0
        minted = capsys.readouterr().out.strip()
        key = jwt.PyJWKClient(f"{api_url}/.well-known/jwks.json").get_signing_key_from_jwt(minted)
        claims = jwt.decode(minted, key.key, algorithms=["RS256"], audience="agent-wait-local", issuer=api_url)
        assert (claims["email"], claims["cognito:groups"]) == ("carol@example.com", ["finance", "ops"])
    finally:
        stop.set()
        server.join(timeout=60)
    assert status == [0], "dev must stop cleanly"
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{api_url}/questions", timeout=5)


# -- one stack for the rest -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(refund_template: dict[str, Any]) -> Iterator[Api]:
    """The refund stack on the emulator with its answer API on 127.0.0.1; finance only may answer."""
    clock = MovableClock()
    local = EmulatedStack(
        refund_template,
        clock=clock,
        stack_name=f"api-{uuid.uuid4().hex[:8]}",
        extra_environment={"AGENT_WAIT_GRAPH": "local_api_graph:build_graph"},
    )
    local.start()
    try:
        yield Api(local, clock)
    finally:
        local.stop()


def test_the_router_names_the_api_in_each_envelope_reply_to(api: Api) -> None:
    from agent_wait.aws.ledger import DynamoDbLedger

    _, question = api.start()
    record = DynamoDbLedger(api.local.table, client=api.local.client("dynamodb")).find(question)
    assert record is not None
    assert record.envelope.reply_to["api_url"] == api.url
    assert api.url.startswith("http://127.0.0.1:")


# -- the authorizer ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/questions"), ("GET", "/questions/q-1"), ("POST", "/questions/q-1/answer")],
)
def test_without_a_token_api_gateway_says_unauthorized(api: Api, method: str, path: str) -> None:
    reply = call(
        f"{api.url}{path}", method=method, body={"answer": {"action": "approve"}} if method == "POST" else None
    )
    assert (reply.status, reply.body) == (401, {"message": "Unauthorized"})
    assert reply.headers["www-authenticate"] == "Bearer"


def _bad_tokens(api: Api) -> dict[str, str]:
    from agent_wait.local.jwt import LocalIssuer

    forger = LocalIssuer(api.local.issuer.url)
    forger.key_id = api.local.issuer.key_id  # same key id, another key: the signature must not verify
    hour_ago = time.time() - 7200
    return {
        "not a JWT": "not-a-jwt",
        "signed with another key": forger.token("mallory@example.com", ["finance"]),
        "expired": api.token(issued_at=hour_ago, expires_in=3600),
        "for another audience": api.token(audience="someone-elses-api"),
        "from another issuer": LocalIssuer("https://issuer.example.com").token("eve@example.com", ["finance"]),
        "HS256 with the public key id": jwt.encode(
            {"iss": api.local.issuer.url, "aud": "agent-wait-local", "sub": "x", "iat": 1, "exp": 2**31},
            "a shared secret long enough for HS256 to accept",
            algorithm="HS256",
            headers={"kid": api.local.issuer.key_id},
        ),
    }


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("not a JWT", "not a JWT"),
        ("signed with another key", "signature does not verify"),
        ("expired", "expired"),
        ("for another audience", "another audience"),
        ("from another issuer", "key id is not in the issuer's JWKS"),
        ("HS256 with the public key id", "RS256"),
    ],
)
def test_a_bad_token_is_unauthorized_and_never_reaches_the_handler(api: Api, kind: str, reason: str) -> None:
    token = _bad_tokens(api)[kind]
    _, question = api.start()
    reply = api.answer(question, "approve", token=token)
    assert (reply.status, reply.body) == (401, {"message": "Unauthorized"}), kind
    assert reason in reply.headers["www-authenticate"]
    assert api.status(question) == "open", "a refused token must not decide anything"
    assert api.local.pump().handled == 0


def test_a_verified_token_reaches_the_handler_as_api_gateway_flattens_it(api: Api) -> None:
    from agent_wait.local.jwt import flatten_claims

    claims = jwt.decode(api.token(groups=("finance", "ops")), options={"verify_signature": False})
    flat = flatten_claims(claims)
    assert flat["cognito:groups"] == "[finance ops]"
    assert flat["exp"] == str(claims["exp"])
    assert all(isinstance(value, str) for value in flat.values())


# -- reading ----------------------------------------------------------------------------------------------------


def test_get_questions_lists_the_open_question_of_a_started_refund(api: Api) -> None:
    thread, question = api.start()
    reply = call(f"{api.url}/questions?status=open&tag=approver_group:finance&limit=100", token=api.token())
    assert reply.status == 200, reply
    listed = {q["question_id"]: q for q in reply.body["questions"]}
    assert question in listed, "the refund's question must be listed"
    assert (listed[question]["thread_id"], listed[question]["policy"]["allowed_actions"]) == (
        thread,
        ["approve", "reject"],
    )


def test_passkeys_are_on_for_the_inbox_opened_on_localhost(api: Api) -> None:
    """WebAuthn's relying party is a host name, never an IP address: the emulated API is its own relying party under
    `localhost`, so a person registers and uses passkeys there with no setting (docs/proving.md)."""
    assert api.local.passkey_url == api.url.replace("//127.0.0.1:", "//localhost:") + "/inbox"
    assert api.local.environment["AGENT_WAIT_PASSKEY_ORIGIN"] == api.local.passkey_url.removesuffix("/inbox")
    reply = call(f"{api.url}/passkeys/registration/options", token=api.token(), method="POST", body={})
    assert reply.status == 200, reply
    assert reply.body["rp"]["id"] == "localhost"


def test_get_one_question_is_200_and_an_unknown_one_404(api: Api) -> None:
    thread, question = api.start()
    reply = call(f"{api.url}/questions/{question}", token=api.token())
    assert reply.status == 200, reply
    assert (reply.body["question_id"], reply.body["thread_id"], reply.body["status"]) == (question, thread, "open")
    assert reply.body["policy"]["rules"]["answerers"]["groups"] == ["finance"]
    missing = call(f"{api.url}/questions/no-such-question", token=api.token())
    assert missing.status == 404
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.body["reason"] == "unknown_question"


# -- answering --------------------------------------------------------------------------------------------------


def test_finance_answers_200_and_the_router_resumes_the_agent_exactly_once(api: Api) -> None:
    # GIVEN a refund waiting on finance
    thread, question = api.start()
    # WHEN alice (finance) approves over HTTP
    reply = api.answer(question, "approve", token=api.token("alice@example.com"), key="alice-1")
    # THEN the response is the real outcome, and the router resumes the agent once
    assert reply.status == 200, reply
    assert (reply.body["result"], reply.body["outcome"]["answered_by"], reply.body["handed_over"]) == (
        "won",
        "alice@example.com",
        True,
    )
    outcomes = api.local.pump().outcomes
    assert [o.kind.value for o in outcomes] == ["applied"]
    assert api.refunds(thread) == 1
    assert api.status(question) == "resumed"
    # AND the same answer resent (same Idempotency-Key) repeats the outcome without a second resume
    again = api.answer(question, "approve", token=api.token("alice@example.com"), key="alice-1")
    assert (again.status, again.body["result"]) == (200, "repeated")
    assert api.local.pump().handled == 0
    assert api.refunds(thread) == 1


def test_two_people_answering_at_once_get_one_200_and_one_409_naming_the_winner(api: Api) -> None:
    thread, question = api.start()
    people = {"alice@example.com": "approve", "bob@example.com": "reject"}
    tokens = {person: api.token(person) for person in people}
    barrier = threading.Barrier(len(people))
    replies: dict[str, Reply] = {}

    def answer(person: str) -> None:
        barrier.wait()
        replies[person] = api.answer(question, people[person], token=tokens[person])

    threads = [threading.Thread(target=answer, args=(person,)) for person in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(r.status for r in replies.values()) == [200, 409], {p: r.body for p, r in replies.items()}
    winner = next(person for person, r in replies.items() if r.status == 200)
    loser = next(r for r in replies.values() if r.status == 409)
    assert loser.body["reason"] == "already_decided"
    assert loser.body["question"]["outcome"]["answered_by"] == winner
    assert [o.kind.value for o in api.local.pump().outcomes] == ["applied"]
    assert api.refunds(thread) == (1 if people[winner] == "approve" else 0)


def test_an_answer_after_the_deadline_is_410(api: Api) -> None:
    _, question = api.start()
    api.clock.offset += timedelta(days=3, minutes=1)  # as the demo does: three days pass
    try:
        reply = api.answer(question, "approve", token=api.token())
    finally:
        api.clock.offset -= timedelta(days=3, minutes=1)
    assert reply.status == 410, reply
    assert reply.body["reason"] == "expired"
    assert api.local.pump().handled == 0


def test_an_action_the_question_does_not_allow_is_422_and_the_question_stays_open(api: Api) -> None:
    _, question = api.start()
    reply = api.answer(question, "escalate", token=api.token())
    assert reply.status == 422, reply
    assert (reply.headers["content-type"], reply.body["reason"]) == ("application/problem+json", "action_not_allowed")
    assert api.status(question) == "open"


def test_a_user_outside_the_answerer_groups_is_403_and_the_question_stays_open(api: Api) -> None:
    _, question = api.start()
    reply = api.answer(question, "approve", token=api.token("oscar@example.com", ("ops",)))
    assert reply.status == 403, reply
    assert reply.body["reason"] == "answerer_not_allowed"
    assert api.status(question) == "open"
    assert api.local.pump().handled == 0


def test_an_unknown_question_is_404(api: Api) -> None:
    reply = api.answer("no-such-question", "approve", token=api.token())
    assert (reply.status, reply.body["reason"]) == (404, "unknown_question")


# -- the front itself -------------------------------------------------------------------------------------------


def test_signed_link_routes_reach_the_handler_with_no_authorizer(api: Api) -> None:
    # The links' own proof is their signature: the front must not answer 401 for them.
    for path in ("/questions/q-1/confirm", "/questions/q-1/link", "/questions/q-1/link/answer"):
        reply = call(f"{api.url}{path}?token=abc")
        assert reply.body != {"message": "Unauthorized"}, path
        assert reply.status != 401, path


def test_the_dev_sign_in_gives_a_token_the_api_accepts_and_refuses_bad_requests(api: Api) -> None:
    signed = call(f"{api.url}/dev/token", method="POST", body={"user": "dana@example.com", "groups": ["finance"]})
    assert signed.status == 200, signed
    assert signed.headers["cache-control"] == "no-store"
    assert call(f"{api.url}/questions", token=signed.body["token"]).status == 200
    config = call(f"{api.url}/.well-known/openid-configuration").body
    assert (config["issuer"], config["jwks_uri"]) == (api.url, f"{api.url}/.well-known/jwks.json")
    for body, message in [
        ({"groups": ["finance"]}, "user must be a non-empty string"),
        ({"user": "dana@example.com", "groups": ["fin ance"]}, "groups must be a list of names without spaces"),
        ({"user": "dana@example.com", "role": "admin"}, "unknown field(s) ['role']"),
        ({"user": "dana@example.com", "expires_in": 10**9}, "expires_in must be a whole number of seconds"),
    ]:
        refused = call(f"{api.url}/dev/token", method="POST", body=body)
        assert refused.status == 400, body
        assert message in refused.body["message"]


def test_the_front_never_logs_bodies_query_strings_or_tokens(
    api: Api, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    _, question = api.start()
    token = api.token()
    canary = f"canary-{uuid.uuid4().hex}"
    capsys.readouterr()
    with caplog.at_level(logging.DEBUG, logger="agent_wait"):
        call(f"{api.url}/questions?tag=approver_group:{canary}", token=token)
        call(f"{api.url}/questions?cursor={canary}", token="bad." + canary)
        call(
            f"{api.url}/questions/{question}/answer",
            method="POST",
            token=token,
            body={"answer": {"action": "escalate", "note": canary}},
        )
    seen = caplog.text + "".join(capsys.readouterr())
    assert "local api: GET /questions 200" in caplog.text, "the front logs its route and status"
    assert canary not in seen
    assert token not in seen


# -- the CLI over HTTP ------------------------------------------------------------------------------------------


@pytest.fixture
def cli(api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI in another terminal while `agent-wait dev` runs: only the state file, not this process's env."""
    monkeypatch.chdir(tmp_path)
    Target(
        queue_url=api.local.queue_url,
        table=api.local.table,
        endpoint_url=api.local.endpoint_url,
        region="us-east-1",
        source="dev",
        api_url=api.url,
        issuer=api.local.issuer.url,
    ).save()
    from agent_wait.host import router

    router._router()  # the router had its cold start in its own environment, before the CLI runs in another
    with monkeypatch.context() as env:
        for name in ("AGENT_WAIT_QUEUE_URL", "AGENT_WAIT_TABLE", "AGENT_WAIT_TOKEN"):
            env.delenv(name, raising=False)
        yield


def test_cli_token_then_answer_over_http_prints_the_real_outcome(
    api: Api, cli: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    thread, question = api.start()
    # GIVEN a token from `agent-wait token`
    capsys.readouterr()
    assert main(["token", "--user", "alice@example.com", "--groups", "finance"]) == 0
    token = capsys.readouterr().out.strip()
    # WHEN alice answers with the CLI
    assert main(["answer", question, "approve", "--token", token, "--note", "within budget"]) == 0
    # THEN it says her answer won, and the agent resumes once
    assert f"answer 'approve' won question {question} on thread {thread}, recorded as alice@example.com" in (
        capsys.readouterr().out
    )
    assert [o.kind.value for o in api.local.pump().outcomes] == ["applied"]
    assert api.refunds(thread) == 1
    # AND `agent-wait questions` says who decided, and how
    assert main(["questions", "--status", "resumed"]) == 0
    # The answer API runs in this process: its Powertools log lines (JSON) share stdout with the CLI's own.
    printed = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("{")]
    line = next(line for line in printed if question in line)
    assert line.startswith("answered ")
    assert "  agent=resumed  by=alice@example.com via=api  asks=issue_refund(" in line
    # AND bob, answering later (token from the environment), is told who decided
    assert main(["token", "--user", "bob@example.com", "--groups", "finance"]) == 0
    monkeypatch.setenv("AGENT_WAIT_TOKEN", capsys.readouterr().out.strip())
    assert main(["answer", question, "reject"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"agent-wait: question {question} was already decided by alice@example.com at ")
    assert "(answered with 'approve'); your answer was not applied" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("outside finance", "the answer API refused the answer (answerer_not_allowed): only members of finance"),
        ("not allowed", "the answer API refused the answer (action_not_allowed)"),
        ("bad token", "the answer API refused the token (expired, or not from its issuer)"),
        ("--by", "--by names the answerer on the queue; over the answer API the token says who you are"),
        ("unknown", "no question 'no-such-question'; list them with: agent-wait questions --status open"),
    ],
)
def test_cli_answer_over_http_refusals_are_one_line_that_says_what_to_do(
    api: Api, cli: None, capsys: pytest.CaptureFixture[str], case: str, message: str
) -> None:
    _, question = api.start()
    finance = api.token("alice@example.com")
    argv = {
        "outside finance": ["answer", question, "approve", "--token", api.token("oscar@example.com", ("ops",))],
        "not allowed": ["answer", question, "escalate", "--token", finance],
        "bad token": ["answer", question, "approve", "--token", "not-a-jwt"],
        "--by": ["answer", question, "approve", "--token", finance, "--by", "someone@example.com"],
        "unknown": ["answer", "no-such-question", "approve", "--token", finance],
    }[case]
    capsys.readouterr()
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("agent-wait: ")
    assert message in err
    assert err.count("\n") == 1, f"expected one line, got {err!r}"
    assert api.status(question) == "open"


def test_cli_answer_without_a_token_goes_on_the_queue_where_the_policy_still_holds(
    api: Api, cli: None, capsys: pytest.CaptureFixture[str]
) -> None:
    _, question = api.start()
    # WHEN someone answers with no token: it goes on the entry queue, as before the API
    capsys.readouterr()
    assert main(["answer", question, "approve", "--by", "cfo@example.com"]) == 0
    assert "sent on the entry queue" in capsys.readouterr().out
    # THEN the router applies the same rule as the API: no finance group proven, no decision
    [outcome] = api.local.pump().outcomes
    assert (outcome.kind.value, outcome.reason) == ("refused", "answerer_not_allowed")
    assert api.status(question) == "open"


def test_cli_token_without_a_running_dev_says_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["token", "--user", "alice@example.com"]) == 1
    assert "no `agent-wait dev` is running from this folder or any folder above it" in capsys.readouterr().err


def test_the_local_api_protects_exactly_the_routes_the_construct_puts_behind_its_authorizer() -> None:
    from agent_wait.local.api_server import PROTECTED_ROUTES, PUBLIC_ROUTES
    from agent_wait_cdk.answer_api import A2A_OPEN_ROUTES, A2A_ROUTES, SIGNED_IN_ROUTES

    # A2A's routes are the construct's only with `AgentWait(a2a=...)`; the local API always serves them (404 when off).
    protected = (*SIGNED_IN_ROUTES, *A2A_ROUTES)
    assert sorted(PROTECTED_ROUTES) == sorted(f"{method} {path}" for method, path in protected)
    assert {f"{method} {path}" for method, path in A2A_OPEN_ROUTES} <= set(PUBLIC_ROUTES)


def test_an_ag_ui_client_lists_the_refund_and_resumes_it_over_http(api: Api) -> None:
    from ag_ui.core import Interrupt

    # GIVEN a refund waiting on finance
    thread, question = api.start()
    token = api.token("alice@example.com")
    # WHEN an AG-UI client lists the thread's interrupts, without a token and then with one
    assert call(f"{api.url}/agui/interrupts?thread_id={thread}", token=None).status == 401
    listed = call(f"{api.url}/agui/interrupts?thread_id={thread}", token=token)
    assert listed.status == 200, listed
    (interrupt,) = [Interrupt.model_validate(item) for item in listed.body["interrupts"]]
    assert (interrupt.id, interrupt.reason) == (question, "tool_approval")
    # AND resolves it with a payload its response schema accepts
    reply = call(
        f"{api.url}/agui/resume",
        method="POST",
        token=token,
        body={"resume": [{"interruptId": interrupt.id, "status": "resolved", "payload": {"action": "approve"}}]},
    )
    # THEN the refund is decided as alice, and the router resumes the agent once
    assert reply.status == 200, reply
    assert reply.body["outcome"]["answered_by"] == "alice@example.com"
    assert [o.kind.value for o in api.local.pump().outcomes] == ["applied"]
    assert api.refunds(thread) == 1


@pytest.mark.parametrize("host", ["rebind.attacker.example", "rebind.attacker.example:{port}", "127.0.0.1:1", ""])
def test_a_request_for_another_host_is_refused_so_a_rebinding_page_cannot_reach_the_dev_api(
    api: Api, host: str
) -> None:
    # Issue 25: a page whose own name resolves to 127.0.0.1 (DNS rebinding) could mint a dev token and answer on a
    # developer's stack from their browser; it sends its own name as Host, which is refused before any route.
    port = api.url.rsplit(":", 1)[1]
    reply = call(f"{api.url}/inbox", headers={"Host": host.format(port=port)})
    assert reply.status == 421
    for name in (f"localhost:{port}", f"127.0.0.1:{port}"):
        assert call(f"{api.url}/inbox", headers={"Host": name}).status == 200
