"""Signed-link routes on the answer API: a scanner's GET changes nothing, the page's POSTs answer once, and
every token that cannot be used is refused with its reason, through `create_app` with HTTP API v2 events
that carry no authorizer claims (API Gateway serves these routes without the JWT authorizer)."""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from tests.support.api_events import Response, call

from agent_wait.contract.envelope import Question, WaitEnvelope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeyring, LinkKeys, link_url, mint_token
from agent_wait.ledger import InMemoryLedger
from agent_wait.policy import WaitPolicy

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
DEADLINE = T0 + timedelta(hours=4)
K1 = "k1-secret-" + "a" * 40
K2 = "k2-secret-" + "b" * 40
PAYLOAD = "<script>alert('pwned')</script>"
KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": K1}))


@dataclass
class Api:
    """The answer API over an in-memory ledger and entry queue, with a clock the test moves."""

    ledger: InMemoryLedger = field(default_factory=InMemoryLedger)
    queue: InMemoryEntryQueue = field(default_factory=InMemoryEntryQueue)
    now: datetime = T0
    context: ApiContext = field(init=False)

    def __post_init__(self) -> None:
        service = AnswerService(self.ledger, self.queue, clock=lambda: self.now)
        self.context = ApiContext(ledger=self.ledger, service=service, link_keys=KEYS, clock=lambda: self.now)
        self.app = create_app(lambda: self.context)

    def ask(self, question_id: str = "q-1", *, thread_id: str = "order-1", **policy: Any) -> str:
        question = Question(
            thread_id,
            question_id,
            {"function": "refund", "args": {"order": "A-1", "memo": PAYLOAD}},
            policy=WaitPolicy(**{"timeout": "PT4H", "allowed_actions": ("approve", "reject"), **policy}),
            source={"function": "refund"},
            asked_at=T0,
        )
        self.ledger.open(WaitEnvelope.create(question), now=T0)
        return question_id

    def call(self, method: str, path: str, body: Any = None) -> Response:
        return call(self.app, method, path, body)

    def read(self, question_id: str, token: str) -> Response:
        return self.call("POST", f"/questions/{question_id}/link", {"token": token})

    def answer(self, question_id: str, token: str, **extra: Any) -> Response:
        return self.call("POST", f"/questions/{question_id}/link/answer", {"token": token, **extra})

    def status(self, question_id: str = "q-1") -> QuestionStatus:
        record = self.ledger.find(question_id)
        assert record is not None
        return record.status


def link(
    question_id: str = "q-1",
    action: str = "approve",
    *,
    keys: LinkKeys = KEYS,
    approver: str | None = "alice@example.com",
    thread_id: str = "order-1",
) -> str:
    return mint_token(
        keys,
        question_id=question_id,
        thread_id=thread_id,
        action=action,
        expires_at=DEADLINE,
        approver=approver,
        now=T0,
    )


@pytest.fixture
def api() -> Api:
    api = Api()
    api.ask()
    return api


# -- the page: scanner-safe, self-contained, strict ------------------------------------------------------------


def test_a_scanners_get_twice_leaves_the_question_open_and_the_queue_empty(api: Api):
    # WHEN a mail scanner opens the link twice (the fragment never reaches the server)
    pages = [api.call("GET", "/questions/q-1/confirm") for _ in range(2)]

    # THEN it gets the page, and nothing was decided or queued
    assert [p.status for p in pages] == [200, 200]
    assert pages[0].headers["content-type"] == "text/html; charset=utf-8"
    assert api.status() is QuestionStatus.OPEN
    assert api.queue.messages == []


def test_the_page_is_not_cached_not_framed_and_sends_no_referrer(api: Api):
    page = api.call("GET", "/questions/q-1/confirm")

    assert page.headers["cache-control"] == "no-store"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    csp = dict(part.strip().split(" ", 1) for part in page.headers["content-security-policy"].split(";"))
    assert csp["default-src"] == "'none'"
    assert csp["script-src"] == "'self'", "only the same-origin script file runs: no inline script, no other host"
    assert csp["style-src"] == "'self'"
    assert csp["connect-src"] == "'self'"
    assert csp["frame-ancestors"] == "'none'"
    assert "unsafe" not in page.headers["content-security-policy"]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.inline_script = ""
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.inline_script += data


def page_tags(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    return parser


def test_the_page_loads_only_its_own_files_and_has_no_inline_script_or_style(api: Api):
    page = api.call("GET", "/questions/q-1/confirm")
    parsed = page_tags(page.body)

    # Every asset is a relative URL on this API (so it works under any stage or base path); nothing inline.
    assets = [attrs.get("src") or attrs.get("href") for tag, attrs in parsed.tags if tag in ("script", "link")]
    assert sorted(a or "" for a in assets) == [
        "confirm/confirm.css",
        "confirm/confirm.js",
        "confirm/inbox-reading.js",
        "confirm/shared.js",
    ]
    assert parsed.inline_script.strip() == ""
    assert all("style" not in attrs and not any(k.startswith("on") for k in attrs) for _, attrs in parsed.tags)
    assert "<style" not in page.body
    # Each asset is served by the API, from the package, uncached.
    for name, kind in (
        ("confirm.js", "text/javascript"),
        ("shared.js", "text/javascript"),
        ("confirm.css", "text/css"),
    ):
        asset = api.call("GET", urllib.parse.urljoin("/questions/q-1/confirm", f"confirm/{name}"))
        assert asset.status == 200
        assert asset.headers["content-type"].startswith(kind)
        assert asset.body == (files("agent_wait.host.api") / "pages" / name).read_text(encoding="utf-8")
        assert asset.headers["x-content-type-options"] == "nosniff"


def test_the_page_itself_holds_no_question_content(api: Api):
    page = api.call("GET", "/questions/q-1/confirm")

    assert "refund" not in page.body
    assert "A-1" not in page.body
    assert "alert(" not in page.body


def test_the_button_has_an_accessible_name_and_is_a_real_button(api: Api):
    parsed = page_tags(api.call("GET", "/questions/q-1/confirm").body)
    by_id = {attrs.get("id"): (tag, attrs) for tag, attrs in parsed.tags if attrs.get("id")}

    tag, attrs = by_id["confirm"]
    assert tag == "button"
    assert attrs["type"] == "button"
    assert "Confirm" in api.call("GET", "/questions/q-1/confirm").body.split('id="confirm"')[1].split("</button>")[0]
    labels = [attrs.get("for") for tag, attrs in parsed.tags if tag == "label"]
    assert "note" in labels, "the note field has a label"
    assert by_id["status"][1].get("role") == "status"


# -- reading a link -------------------------------------------------------------------------------------------


def test_reading_a_link_shows_the_question_its_action_and_deadline_and_changes_nothing(api: Api):
    reply = api.read("q-1", link())

    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json"
    assert reply.headers["cache-control"] == "no-store"
    body = reply.json()
    assert body["link"] == {"action": "approve", "expires_at": "2030-01-01T13:00:00Z", "approver": "alice@example.com"}
    assert body["question"]["question"] == {"function": "refund", "args": {"order": "A-1", "memo": PAYLOAD}}
    assert body["question"]["source"] == {"function": "refund"}
    assert body["question"]["status"] == "open"
    assert api.status() is QuestionStatus.OPEN
    assert api.queue.messages == []


# -- answering ----------------------------------------------------------------------------------------------------


def test_the_pages_post_answers_once_with_the_link_as_the_answerer(api: Api):
    token = link()

    reply = api.answer("q-1", token, note="ok by me")

    assert reply.status == 200
    assert reply.json()["result"] == "won"
    record = api.ledger.find("q-1")
    assert record is not None
    assert record.status is QuestionStatus.ANSWERED
    assert record.answer == {"action": "approve", "note": "ok by me"}
    assert (record.answered_by, record.via, record.sender) == ("alice@example.com", "link", "link:k1")
    assert record.answer_id is not None
    assert record.answer_id.startswith("link:")
    assert len(record.answer_id) == len("link:") + 40
    assert len(api.queue.messages) == 1
    message, _group, dedup = api.queue.messages[0]
    assert (message["question_id"], message["answer"], dedup) == (
        "q-1",
        {"action": "approve", "note": "ok by me"},
        record.answer_id,
    )


def test_a_link_made_for_nobody_in_particular_is_recorded_as_a_signed_link(api: Api):
    api.answer("q-1", link(approver=None))

    record = api.ledger.find("q-1")
    assert record is not None
    assert record.answered_by == "signed link"


def test_a_second_click_repeats_the_outcome_and_decides_nothing_more(api: Api):
    token = link()
    first = api.answer("q-1", token)

    again = api.answer("q-1", token)

    assert (first.status, again.status) == (200, 200)
    assert again.json()["result"] == "repeated"
    assert again.json()["outcome"]["answered_by"] == "alice@example.com"
    assert len(api.queue.messages) == 1


def test_another_link_for_a_decided_question_gets_409_with_who_won(api: Api):
    api.answer("q-1", link(action="approve", approver="alice@example.com"))

    late = api.answer("q-1", link(action="reject", approver="bob@example.com"))

    assert late.status == 409
    assert late.headers["content-type"] == "application/problem+json"
    problem = late.json()
    assert problem["reason"] == "already_decided"
    assert problem["question"]["outcome"]["answered_by"] == "alice@example.com"
    assert problem["question"]["outcome"]["answer"] == {"action": "approve"}
    assert len(api.queue.messages) == 1


def test_reading_a_link_after_the_question_was_decided_shows_the_outcome(api: Api):
    api.answer("q-1", link(action="approve", approver="alice@example.com"))

    reply = api.read("q-1", link(action="reject", approver="bob@example.com"))

    assert reply.status == 200
    assert reply.json()["question"]["status"] == "answered"
    assert reply.json()["question"]["outcome"]["answered_by"] == "alice@example.com"


# -- refused tokens -----------------------------------------------------------------------------------------------


def tampered(token: str) -> str:
    version, kid, payload, signature = token.split(".")
    return f"{version}.{kid}.{payload}.{'B' if signature[0] == 'A' else 'A'}{signature[1:]}"


@pytest.mark.parametrize(
    ("reason", "make", "at"),
    [
        ("expired", link, DEADLINE),
        ("tampered", lambda: tampered(link()), T0),
        ("wrong_question", lambda: link("q-2"), T0),
        ("unknown_key", lambda: link(keys=LinkKeys.parse(json.dumps({"active": "k0", "k0": K2}))), T0),
        ("malformed", lambda: "not-a-token", T0),
    ],
)
@pytest.mark.parametrize("route", ["read", "answer"])
def test_a_token_that_cannot_be_used_gets_403_with_its_reason_and_changes_nothing(
    api: Api, reason: str, make: Any, at: datetime, route: str
):
    api.ask("q-2")
    api.now = at

    reply = getattr(api, route)("q-1", make())

    assert reply.status == 403
    assert reply.headers["content-type"] == "application/problem+json"
    assert reply.headers["cache-control"] == "no-store"
    assert reply.json()["reason"] == reason
    assert reply.json()["type"] == f"urn:agent-wait:problem:{reason}"
    assert "question" not in reply.json(), "a refused token sees nothing of the question"
    assert api.status("q-1") is QuestionStatus.OPEN
    assert api.queue.messages == []


def test_a_link_signed_with_a_rotated_out_key_is_refused_while_the_new_key_works(api: Api):
    # GIVEN links signed with k1 and with k2, then k1 rotated out of the secret
    old = link()
    new = link(keys=LinkKeys.parse(json.dumps({"active": "k2", "k1": K1, "k2": K2})))
    api.context.link_keys = LinkKeys.parse(json.dumps({"active": "k2", "k2": K2}))

    # THEN the k1 link is refused as unknown_key, and the k2 link still answers
    assert api.answer("q-1", old).json()["reason"] == "unknown_key"
    assert api.answer("q-1", new).status == 200


def test_a_forged_key_id_just_before_a_rotation_does_not_refuse_the_new_keys_first_link(api: Api):
    # GIVEN a warm API whose keyring read k1, and a forged link under a made-up key id that it refuses
    secret = {"value": json.dumps({"active": "k1", "k1": K1})}
    api.context.link_keys = LinkKeyring(lambda: LinkKeys.parse(secret["value"]))
    forged = link(keys=LinkKeys.parse(json.dumps({"active": "k9", "k9": K2})))
    assert api.answer("q-1", forged).json()["reason"] == "unknown_key"

    # WHEN the keys rotate to k2 and the router's first link under k2 is opened
    secret["value"] = json.dumps({"active": "k2", "k1": K1, "k2": K2})
    reply = api.answer("q-1", link(keys=LinkKeys.parse(secret["value"])))

    # THEN the API read the keys again for it and the answer won
    assert (reply.status, reply.json()["result"]) == (200, "won")


def test_a_link_from_before_a_rotation_still_answers_after_it(api: Api):
    token = link()
    api.context.link_keys = LinkKeys.parse(json.dumps({"active": "k2", "k1": K1, "k2": K2}))

    assert api.answer("q-1", token).json()["result"] == "won"


def test_a_link_whose_action_the_question_does_not_allow_is_refused(api: Api):
    reply = api.answer("q-1", link(action="escalate"))

    assert reply.status == 422
    assert reply.json()["reason"] == "action_not_allowed"
    assert api.status() is QuestionStatus.OPEN
    assert api.queue.messages == []


def test_a_link_for_a_question_that_is_gone_is_404(api: Api):
    reply = api.answer("q-9", link("q-9"))

    assert reply.status == 404
    assert reply.json()["reason"] == "unknown_question"


def test_a_link_with_the_right_question_but_another_thread_is_wrong_question(api: Api):
    reply = api.answer("q-1", link(thread_id="order-2"))

    assert reply.status == 403
    assert reply.json()["reason"] == "wrong_question"


def test_a_question_only_certain_groups_may_answer_refuses_a_link(api: Api):
    # A link proves no group membership: such a question is answered through the signed-in API.
    api.ask("q-3", answerer_groups=("finance",))

    reply = api.answer("q-3", link("q-3"))

    assert reply.status == 403
    assert reply.json()["reason"] == "answerer_not_allowed"
    assert api.status("q-3") is QuestionStatus.OPEN


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        ("not json", 400, "not_json"),
        ('["a list"]', 400, "not_json"),
        ({"token": "x", "action": "reject"}, 400, "unknown_field"),
        ({"token": "x", "note": "n" * 1001}, 422, "bad_answer"),
        ({"token": "x", "note": "a\u0000b"}, 422, "bad_answer"),
        ({"token": "x", "note": 5}, 400, "bad_note"),
        ({}, 403, "malformed"),
        ({"token": 12}, 403, "malformed"),
    ],
)
def test_a_body_that_is_not_a_link_answer_is_refused(api: Api, body: Any, status: int, reason: str):
    reply = api.call("POST", "/questions/q-1/link/answer", body)

    assert (reply.status, reply.json()["reason"]) == (status, reason)
    assert api.status() is QuestionStatus.OPEN


def test_the_read_route_takes_no_note(api: Api):
    reply = api.call("POST", "/questions/q-1/link", {"token": link(), "note": "hi"})

    assert (reply.status, reply.json()["reason"]) == (400, "unknown_field")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/questions/q-1/confirm"),
        ("GET", "/questions/q-1/confirm/confirm.js"),
        ("POST", "/questions/q-1/link"),
        ("POST", "/questions/q-1/link/answer"),
    ],
)
def test_without_link_keys_every_link_route_is_404_links_off(api: Api, method: str, path: str):
    api.context.link_keys = None

    reply = api.call(method, path, {"token": link()} if method == "POST" else None)

    assert reply.status == 404
    assert reply.json()["reason"] == "links_off"
    assert "AGENT_WAIT_LINK_KEYS_ARN" in reply.json()["detail"]
    assert api.status() is QuestionStatus.OPEN


def test_no_token_and_no_question_content_reaches_a_log_line(api: Api, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    token = link()
    other = link(action="reject")
    api.ask("q-2")

    api.call("GET", "/questions/q-1/confirm")
    api.read("q-1", token)
    api.answer("q-1", token, note="private note")
    api.answer("q-1", token)
    api.answer("q-1", other)
    api.answer("q-1", tampered(other))
    api.answer("q-2", token)

    assert any(r.getMessage() == "signed link used" for r in caplog.records)
    assert any(r.getMessage() == "signed link refused" for r in caplog.records)
    secrets = [token, other, tampered(other), *token.split(".")[2:], *other.split(".")[2:], K1, PAYLOAD, "private note"]
    for record in caplog.records:
        line = f"{record.getMessage()} {record.__dict__}"
        for value in secrets:
            assert value not in line, f"{record.getMessage()!r} holds a token, a key or question content"


# -- the page's own script, run against these routes -------------------------------------------------------------

HARNESS = r"""
"use strict";
// Runs confirm.js, an ES module, and what it imports in a V8 context with a minimal DOM whose HTML setters
// throw, and forwards its fetch calls to the Python test (one JSON line out, one JSON line back), so the script
// talks to the real routes.
const vm = require("node:vm");
const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");
const setup = JSON.parse(process.argv[process.argv.length - 1]);
const waiting = [];
readline.createInterface({ input: process.stdin }).on("line", (line) => waiting.shift()(JSON.parse(line)));
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
function makeElement(state) {
  // Text and child elements only: setting textContent drops the children, as in a browser.
  const element = {
    text: state.text || "", children: [], value: "", hidden: Boolean(state.hidden), disabled: Boolean(state.disabled),
    focused: false, listeners: {},
    get textContent() { return this.text + this.children.map((child) => child.textContent).join(""); },
    set textContent(value) { this.text = String(value); this.children = []; },
    appendChild(child) { this.children.push(child); return child; },
    removeChild(child) { this.children.splice(this.children.indexOf(child), 1); return child; },
    get firstChild() { return this.children[0] || null; },
    setAttribute(name, value) { this[name] = String(value); },
    addEventListener(type, listener) { this.listeners[type] = listener; },
    focus() { this.focused = true; },
    insertAdjacentHTML() { throw new Error("insertAdjacentHTML used"); },
  };
  for (const name of ["innerHTML", "outerHTML"]) {
    const refuse = () => { throw new Error(name + " used"); };
    Object.defineProperty(element, name, { get: refuse, set: refuse });
  }
  return element;
}
const elements = {};
for (const [id, state] of Object.entries(setup.elements)) {
  elements[id] = makeElement(state);
}
const inflight = [];
function fetch(path, init) {
  const reply = new Promise((resolve) => { waiting.push(resolve); send({ fetch: path, init }); });
  inflight.push(reply);
  return reply.then((r) => ({ status: r.status, json: () => Promise.resolve(JSON.parse(r.body)) }));
}
const document = {
  getElementById: (id) => elements[id] || null,
  createElement: () => makeElement({}),
  createTextNode: (text) => ({ textContent: String(text) }),
  write() { throw new Error("document.write used"); },
};
const sandbox = { document, location: { hash: setup.hash }, fetch, console };
sandbox.window = sandbox;
vm.createContext(sandbox);
async function settle() {
  for (let round = 0; round < 5; round++) {
    await Promise.all(inflight);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
const snapshot = () => Object.fromEntries(
  Object.entries(elements).map(([id, e]) => [
    id,
    {
      text: e.textContent, hidden: e.hidden, disabled: e.disabled, focused: e.focused,
      // a table body's rows, as the text of each cell
      ...(e.children.length ? { rows: e.children.map((row) => row.children.map((cell) => cell.textContent)) } : {}),
    },
  ]),
);
(async () => {
  // the page's module, its imports resolved beside it, as the browser resolves them on the page's route
  const modules = new Map();
  const load = (file) => {
    if (!modules.has(file)) {
      const source = fs.readFileSync(file, "utf8");
      modules.set(file, new vm.SourceTextModule(source, { context: sandbox, identifier: file }));
    }
    return modules.get(file);
  };
  const page = load(setup.script);
  await page.link((specifier, referrer) => load(path.resolve(path.dirname(referrer.identifier), specifier)));
  await page.evaluate();
  await settle();
  const loaded = snapshot();
  const clicked = [];
  for (let i = 0; i < setup.clicks; i++) {
    elements.note.value = setup.note;
    if (!elements.confirm.disabled && !elements.answer.hidden) { elements.confirm.listeners.click(); }
    await settle();
    clicked.push(snapshot());
  }
  send({ done: { loaded, clicked } });
  process.exit(0);
})().catch((error) => { send({ error: String((error && error.stack) || error) }); process.exit(1); });
"""

NODE = shutil.which("node")


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: dict[str, dict[str, Any]] = {}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if named.get("id"):
            self._open = str(named["id"])
            self.elements[self._open] = {"hidden": "hidden" in named, "disabled": "disabled" in named, "text": ""}

    def handle_data(self, data: str) -> None:
        if self._open:
            self.elements[self._open]["text"] += data.strip()

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def run_page(api: Api, question_id: str, token: str, *, clicks: int = 0, note: str = "") -> tuple[dict[str, Any], list]:
    """Open the confirmation page for `question_id#token` in a script runner wired to `api`; press the button."""
    page_path = f"/questions/{urllib.parse.quote(question_id, safe='')}/confirm"
    page = api.call("GET", page_path)
    assert page.status == 200
    ids = _Ids()
    ids.feed(page.body)
    pages = Path(str(files("agent_wait.host.api") / "pages"))
    setup = {
        "elements": ids.elements,
        "hash": f"#{token}",
        "script": str(pages / "confirm.js"),
        "clicks": clicks,
        "note": note,
    }
    assert NODE is not None
    runner = subprocess.Popen(
        # vm.SourceTextModule (ES modules in a context) is behind this flag in Node 20 and 22
        [NODE, "--experimental-vm-modules", "--no-warnings", "-e", HARNESS, "--", json.dumps(setup)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert runner.stdin is not None
    assert runner.stdout is not None
    requests: list[dict[str, Any]] = []
    try:
        for line in runner.stdout:
            message = json.loads(line)
            if "fetch" in message:
                path = urllib.parse.urljoin(page_path, message["fetch"])
                requests.append({"path": path, **message["init"]})
                reply = api.call(message["init"]["method"], path, message["init"]["body"])
                runner.stdin.write(json.dumps({"status": reply.status, "body": reply.body}) + "\n")
                runner.stdin.flush()
            elif "done" in message:
                return message["done"], requests
            else:
                raise AssertionError(f"the page's script failed: {message['error']}")
        raise AssertionError("the page's script runner ended without a result")
    finally:
        runner.kill()
        runner.wait()


needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (the CDK toolchain brings it)")


@needs_node
def test_the_page_shows_a_script_in_the_question_as_text_and_answers_only_on_click(api: Api):
    # GIVEN a question whose arguments hold a <script> payload, and its approve link
    token = link()

    # WHEN the page is opened and its button pressed once
    result, requests = run_page(api, "q-1", token, clicks=1, note="  fine  ")

    # THEN loading showed the question as text (the DOM's HTML setters would have thrown) and answered nothing
    loaded = result["loaded"]
    assert loaded["function"]["text"] == "refund"
    assert loaded["args-rows"]["rows"] == [["order", "A-1"], ["memo", PAYLOAD]]  # the inbox's argument table
    assert (loaded["call"]["hidden"], loaded["calls"]["hidden"], loaded["question"]["hidden"]) == (False, True, True)
    assert loaded["action"]["text"] == "approve"
    # (in the inbox's time format, shared.js's: the reader's language and zone, to the second)
    assert re.fullmatch(r".*2030.*\b\d{2}:00:00\b.*", loaded["deadline"]["text"]), loaded["deadline"]["text"]
    assert loaded["confirm"] == {"text": "Confirm: approve", "hidden": False, "disabled": False, "focused": False}
    assert loaded["answer"]["hidden"] is False
    # AND the click answered once, with the token in a JSON body and never in a URL
    assert [r["path"] for r in requests] == ["/questions/q-1/link", "/questions/q-1/link/answer"]
    assert all(r["method"] == "POST" and r["credentials"] == "omit" for r in requests)
    assert json.loads(requests[1]["body"]) == {"token": token, "note": "fine"}
    assert all(token not in r["path"] for r in requests)
    after = result["clicked"][0]
    assert after["status"]["text"] == "Done: your answer “approve” is recorded, and the agent carries on."
    assert after["status"]["focused"] is True
    assert after["answer"]["hidden"] is True
    record = api.ledger.find("q-1")
    assert record is not None
    assert (record.status, record.answer) == (QuestionStatus.ANSWERED, {"action": "approve", "note": "fine"})
    assert len(api.queue.messages) == 1


@needs_node
def test_the_page_only_reads_until_the_button_is_pressed(api: Api):
    result, requests = run_page(api, "q-1", link(), clicks=0)

    assert [r["path"] for r in requests] == ["/questions/q-1/link"]
    assert result["loaded"]["confirm"]["disabled"] is False
    assert api.status() is QuestionStatus.OPEN
    assert api.queue.messages == []


@needs_node
def test_the_page_shows_who_decided_when_another_answer_won(api: Api):
    api.answer("q-1", link(action="reject", approver="bob@example.com"))

    result, requests = run_page(api, "q-1", link(action="approve"), clicks=1)

    status = result["loaded"]["status"]["text"]
    assert status.startswith("Already decided by bob@example.com (reject) at ")
    assert result["loaded"]["answer"]["hidden"] is True, "no button for a decided question"
    assert len(requests) == 1
    assert len(api.queue.messages) == 1


@needs_node
def test_the_page_tells_why_a_link_is_refused(api: Api):
    result, _ = run_page(api, "q-1", tampered(link()))

    assert result["loaded"]["status"]["text"].startswith("Refused: This link was changed after it was sent.")
    assert result["loaded"]["answer"]["hidden"] is True
    assert result["loaded"]["details"]["hidden"] is True


@needs_node
def test_the_page_without_a_token_asks_for_the_whole_link(api: Api):
    result, requests = run_page(api, "q-1", "")

    assert requests == []
    assert result["loaded"]["status"]["text"].startswith("This link is incomplete or damaged.")


def test_the_page_serves_only_its_own_files(api: Api):
    for name in ("confirm.html", "other.js", "..%2F..%2Fsecret"):
        reply = api.call("GET", f"/questions/q-1/confirm/{name}")
        assert (reply.status, reply.json()["reason"]) == (404, "no_such_file")


def test_a_question_id_with_reserved_characters_round_trips_through_its_link_url():
    # GIVEN a question whose id needs percent-encoding in a path
    api = Api()
    question_id = api.ask("order-1:q 1/2")
    token = link(question_id)

    # WHEN the link's URL is opened as a browser sends it (path only; the fragment stays behind)
    url = urllib.parse.urlsplit(link_url("https://api.example.com", question_id, token))
    answered = api.call("POST", url.path.removesuffix("/confirm") + "/link/answer", {"token": url.fragment})

    # THEN the route finds the question and the link answers it
    assert url.fragment == token
    assert answered.status == 200
    assert api.status(question_id) is QuestionStatus.ANSWERED


# -- quorum questions: a link's answer is a vote ------------------------------------------------------------------


@pytest.fixture
def quorum() -> Api:
    api = Api()
    api.ask("q-2", quorum=2)
    return api


def test_a_links_vote_on_a_quorum_question_is_202_with_how_many_more_approvals_are_needed(quorum: Api):
    reply = quorum.answer("q-2", link("q-2", approver="alice@example.com"), note="ok by me")

    assert reply.status == 202
    body = reply.json()
    assert (body["result"], body["status"], body["remaining"], body["needed"]) == ("voted", "open", 1, 2)
    assert body["votes"] == [{"by": "alice@example.com", "action": "approve", "at": "2030-01-01T09:00:00Z"}]
    assert body["your_vote"] == {"action": "approve", "at": "2030-01-01T09:00:00Z"}
    assert "ok by me" not in reply.body, "a vote's note is for the agent, not for the next reader"
    assert quorum.status("q-2") is QuestionStatus.OPEN


def test_a_second_persons_link_completes_the_quorum(quorum: Api):
    quorum.answer("q-2", link("q-2", approver="alice@example.com"))

    reply = quorum.answer("q-2", link("q-2", approver="bob@example.com"))

    assert (reply.status, reply.json()["result"]) == (200, "won")
    assert quorum.status("q-2") is QuestionStatus.ANSWERED


def test_reading_a_link_that_voted_says_so(quorum: Api):
    token = link("q-2", approver="alice@example.com")
    quorum.answer("q-2", token)

    mine = quorum.read("q-2", token).json()["question"]
    bobs = quorum.read("q-2", link("q-2", approver="bob@example.com")).json()["question"]

    assert (mine["your_vote"]["action"], mine["remaining"]) == ("approve", 1)
    assert bobs["your_vote"] is None


def test_the_same_person_voting_again_by_another_link_is_409_already_voted_and_changes_nothing(quorum: Api):
    quorum.answer("q-2", link("q-2", "approve", approver="alice@example.com"))
    before = quorum.ledger.find("q-2")
    queued = len(quorum.queue.messages)

    again = quorum.answer("q-2", link("q-2", "reject", approver="alice@example.com"))

    assert again.status == 409
    assert (again.json()["reason"], again.json()["title"]) == ("already_voted", "Already voted")
    after = quorum.ledger.find("q-2")
    assert after is not None
    assert before is not None
    assert (after.status, after.progress) == (QuestionStatus.OPEN, before.progress)
    assert len(quorum.queue.messages) == queued


@needs_node
def test_the_page_says_a_vote_is_recorded_and_how_many_more_approvals_are_needed(quorum: Api):
    result, _ = run_page(quorum, "q-2", link("q-2", approver="alice@example.com"), clicks=1)

    loaded = result["loaded"]
    assert loaded["votes"]["hidden"] is False
    assert loaded["votes"]["text"] == "No votes yet.\n0 of 2 approvals; 2 more approvals needed."
    after = result["clicked"][0]
    assert after["status"]["text"] == "Your vote “approve” is recorded; 1 more approval needed."
    assert after["answer"]["hidden"] is True
    assert after["votes"]["text"].startswith("alice@example.com: approve, ")
    assert after["votes"]["text"].endswith("1 of 2 approvals; 1 more approval needed.")
    assert quorum.status("q-2") is QuestionStatus.OPEN


@needs_node
@pytest.mark.parametrize("action", ["approve", "reject"], ids=["same-link", "another-link-of-theirs"])
def test_the_page_for_someone_who_voted_offers_no_second_vote(quorum: Api, action: str):
    # GIVEN alice voted approve by her approve link
    quorum.answer("q-2", link("q-2", "approve", approver="alice@example.com"))

    # WHEN she opens that link again, or her reject link, and would press the button
    result, requests = run_page(quorum, "q-2", link("q-2", action, approver="alice@example.com"), clicks=1)

    # THEN the page says her vote is recorded and offers no button, so nothing more is sent
    assert result["loaded"]["status"]["text"] == (
        "Your vote “approve” is recorded already; a second vote changes nothing. 1 more approval needed."
    )
    assert result["loaded"]["answer"]["hidden"] is True
    assert len(requests) == 1
    assert quorum.status("q-2") is QuestionStatus.OPEN


def test_a_quorum_links_log_line_holds_no_note(quorum: Api, caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.DEBUG, logger="agent_wait"):
        quorum.answer("q-2", link("q-2", approver="alice@example.com"), note="private reason 42")

    assert caplog.records, "the link's use is logged"
    assert all("private reason 42" not in f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
    assert any(getattr(r, "result", None) == "voted" for r in caplog.records)
