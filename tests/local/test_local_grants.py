"""Standing grants on the embedded emulator, through the answer API over real HTTP and the real router, with each
function held to its own IAM role: issue 43's first "Done when" line, a one-use grant under concurrent asks, and
`agent-wait grants list|show|revoke` on the same stack.

The stack is the refund demo's (the `world` fixture), hosting `tests.agents.grant_graphs`' refund graph, whose policy
`GRANTING` allows grants of at most an hour and three uses.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _http import Reply, call
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from tests.agents import grant_graphs

from agent_wait.aws.ledger import DynamoDbLedger
from agent_wait.cli import main
from agent_wait.cli._grants import pin_words
from agent_wait.cli._target import Target
from agent_wait.common.times import clock_scope
from agent_wait.contract.schema import QuestionStatus
from agent_wait.engine.outcomes import Outcome, OutcomeKind
from agent_wait.local.events import event_record
from agent_wait.local.handlers import ROUTER_HANDLER
from agent_wait.local.stack import EmulatedStack

GRANTED_GRAPH = "tests.agents.grant_graphs:build_granted_refund_graph"
ALICE = "alice@example.com"
UP_TO_500 = {"scope": "agent", "ttl": "PT1H", "uses": 3, "pins": {"amount": {"at_most": 500}}}
"""The issue's grant: one hour, three uses, refunds up to 500 on any thread of the agent."""


@pytest.fixture(scope="module")
def stack(world: Any) -> Iterator[EmulatedStack]:
    """The refund stack hosting the granted refund graph (deployed as a new router would be)."""
    local: EmulatedStack = world.local
    before = local.environment.get("AGENT_WAIT_GRAPH")
    local.use_agent(GRANTED_GRAPH)
    try:
        yield local
    finally:
        if before is not None:
            local.use_agent(before)


def _start(local: EmulatedStack, amount: int) -> tuple[str, Outcome]:
    """A refund of `amount` on a new order (its own thread), run by the router; (order id, the start's outcome)."""
    order = f"order-grant-{uuid.uuid4().hex[:8]}"
    local.send(
        {"thread_id": order, "input": {"order_id": order, "amount": amount}, "start_id": uuid.uuid4().hex},
        deduplication_id=uuid.uuid4().hex,
    )
    (outcome,) = [o for o in local.pump().outcomes if o.thread_id == order]
    assert outcome.kind is OutcomeKind.STARTED, outcome
    return order, outcome


def _asked(local: EmulatedStack, amount: int) -> tuple[str, str]:
    """Start a refund the router must ask about; (order id, question id)."""
    order, outcome = _start(local, amount)
    assert outcome.extra.get("granted") is None, f"a refund of {amount} was decided by a grant: {outcome}"
    (question_id,) = outcome.asked
    return order, question_id


def _token(local: EmulatedStack, user: str = ALICE) -> str:
    return local.issuer.token(user, ["finance"])


def _approve(local: EmulatedStack, question_id: str, grant: dict[str, Any] | None) -> Reply:
    answer: dict[str, Any] = {"action": "approve", **({"grant": grant} if grant is not None else {})}
    return call(
        f"{local.api_url}/questions/{question_id}/answer",
        method="POST",
        token=_token(local),
        body={"answer": answer},
    )


def _receive(local: EmulatedStack, count: int) -> list[dict[str, Any]]:
    """`count` messages off the entry queue as the event source hands them to the router (records, deleted)."""
    sqs = local.client("sqs")
    arn = sqs.get_queue_attributes(QueueUrl=local.queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    records: list[dict[str, Any]] = []
    while len(records) < count:
        received = sqs.receive_message(
            QueueUrl=local.queue_url,
            MaxNumberOfMessages=10,
            AttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
        ).get("Messages", [])
        assert received, f"the entry queue held {len(records)} of the {count} messages"
        for message in received:
            records.append(event_record(message, arn))
            sqs.delete_message(QueueUrl=local.queue_url, ReceiptHandle=message["ReceiptHandle"])
    return records


def _apply(local: EmulatedStack, record: dict[str, Any]) -> None:
    """The router function applies one record, under its own role (the record handler; the batch processor is one
    per Lambda environment, so concurrent invocations each have their own)."""
    from agent_wait.host import router

    with clock_scope(local.clock), local.running_as(ROUTER_HANDLER):
        router.record_handler(SQSRecord(record))


def _ledger(local: EmulatedStack) -> DynamoDbLedger:
    return DynamoDbLedger(local.table, client=local.client("dynamodb"))


def test_an_api_approval_with_a_three_use_grant_decides_the_next_three_asks_within_its_pin_until_revoked(
    stack: EmulatedStack,
) -> None:
    ledger = _ledger(stack)
    # GIVEN a refund of 100, asked
    first_order, first_question = _asked(stack, 100)

    # WHEN Alice approves it through the answer API and grants refunds up to 500 for an hour, three times
    reply = _approve(stack, first_question, UP_TO_500)

    # THEN the approval is decided, the response shows the grant, and the router resumes the refund once
    assert reply.status == 200, reply
    grant = reply.body["grant"]
    assert (grant["function"], grant["pins"], grant["uses_left"], grant["granted_by"], grant["via"]) == (
        "issue_refund",
        {"amount": {"at_most": 500}},
        3,
        ALICE,
        "api",
    )
    assert grant["question_id"] == first_question
    stack.pump()
    assert grant_graphs.REFUNDS[first_order] == 1

    # AND refunds of 200, 300 and 500 run at once: each decided by the grant in Alice's name, refunded once
    for amount in (200, 300, 500):
        order, outcome = _start(stack, amount)
        (question_id,) = outcome.extra.get("granted") or [None]
        assert question_id is not None, f"the refund of {amount} was asked: {outcome}"
        record = ledger.get(order, question_id)
        assert record is not None
        assert (record.status, record.via, record.answered_by) == (QuestionStatus.RESUMED, "grant", ALICE)
        assert grant["grant_id"] in str(record.answer_id)
        assert grant_graphs.REFUNDS[order] == 1, f"the refund of {amount} ran {grant_graphs.REFUNDS[order]} times"

    # AND the grant, read back through the API, is used up and lists the three questions it decided
    shown = call(f"{stack.api_url}/grants/{grant['grant_id']}", token=_token(stack))
    assert shown.status == 200, shown
    assert (shown.body["uses_left"], len(shown.body["decided"]), shown.body["live"]) == (0, 3, False)

    # AND a refund of 600 (over the pin) and a fourth within the pin (no use left) are asked as usual
    for amount in (600, 400):
        order, _ = _asked(stack, amount)
        assert grant_graphs.REFUNDS[order] == 0

    # WHEN Alice makes a new grant, then revokes it through the API
    _, question = _asked(stack, 100)
    again = _approve(stack, question, UP_TO_500)
    assert again.status == 200, again
    stack.pump()
    revoked = call(f"{stack.api_url}/grants/{again.body['grant']['grant_id']}", method="DELETE", token=_token(stack))

    # THEN it is revoked in her name, and the next refund within its pin is asked as usual
    assert revoked.status == 200, revoked
    assert (revoked.body["revoked_by"], revoked.body["live"], revoked.body["uses_left"]) == (ALICE, False, 3)
    order, _ = _asked(stack, 200)
    assert grant_graphs.REFUNDS[order] == 0


def test_of_twenty_concurrent_asks_against_a_one_use_grant_exactly_one_is_decided_by_it(stack: EmulatedStack) -> None:
    # GIVEN a one-use grant for refunds up to 500
    _, question = _asked(stack, 100)
    reply = _approve(stack, question, {**UP_TO_500, "uses": 1})
    assert reply.status == 200, reply
    stack.pump()

    # WHEN twenty refunds within its pin are started at once, each on its own thread, and the router applies the
    # twenty records side by side, eight at a time (as concurrent Lambda invocations would)
    orders = [f"order-race-{uuid.uuid4().hex[:8]}" for _ in range(20)]
    for order in orders:
        stack.send(
            {"thread_id": order, "input": {"order_id": order, "amount": 300}, "start_id": uuid.uuid4().hex},
            deduplication_id=uuid.uuid4().hex,
        )
    records = _receive(stack, 20)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda record: _apply(stack, record), records))

    # THEN exactly one was decided by the grant and nineteen were asked; only the granted one was refunded
    ledger = _ledger(stack)
    rows = [row for order in orders for row in ledger.questions(order)]
    assert len(rows) == 20
    granted = [row for row in rows if row.via == "grant"]
    asked = [row for row in rows if row.status is QuestionStatus.OPEN]
    assert (len(granted), len(asked)) == (1, 19)
    assert sum(grant_graphs.REFUNDS[order] for order in orders) == 1
    kept = call(f"{stack.api_url}/grants/{reply.body['grant']['grant_id']}", token=_token(stack))
    assert (kept.body["uses_left"], kept.body["decided"]) == (0, [granted[0].envelope.question_id])


# -- agent-wait grants ----------------------------------------------------------------------------------------------


@pytest.fixture
def cli_target(stack: EmulatedStack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Target:
    """The CLI pointed at the running stack as `agent-wait dev` points it (.agent-wait/local.json)."""
    monkeypatch.chdir(tmp_path)
    found = Target(queue_url=stack.queue_url, table=stack.table, endpoint_url=stack.endpoint_url, region="us-east-1")
    found.save()
    return found


def _granted(local: EmulatedStack) -> dict[str, Any]:
    """A new three-use grant for refunds up to 500, made by Alice approving a refund of 100; its `grant_view`."""
    _, question = _asked(local, 100)
    reply = _approve(local, question, UP_TO_500)
    assert reply.status == 200, reply
    local.pump()
    return reply.body["grant"]


@pytest.mark.usefixtures("cli_target")
def test_grants_list_and_show_say_what_a_grant_allows_in_words_and_revoke_records_the_operator(
    stack: EmulatedStack, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a grant Alice made through the API
    grant = _granted(stack)
    grant_id = grant["grant_id"]

    # WHEN the operator lists the live grants
    assert main(["grants", "list"]) == 0
    table = capsys.readouterr().out.splitlines()

    # THEN a table names each column, and the grant's row says what it allows in words, its uses, who, how and on what
    assert table[0].split() == [
        *("GRANT", "FUNCTION", "PINS", "USES", "LEFT", "EXPIRES", "GRANTED", "BY", "VIA", "QUESTION", "STATE"),
    ]
    (row,) = [line for line in table if line.startswith(grant_id)]
    for shown in ("issue_refund", "amount <= 500", "3 of 3", grant["expires_at"], ALICE, " api ", "live"):
        assert shown in row, (shown, row)
    assert row.split()[-2] == grant["question_id"]

    # AND --json prints each grant as the API shows it, one per line
    assert main(["grants", "list", "--json"]) == 0
    views = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [view for view in views if view["grant_id"] == grant_id] == [{**grant, "uses_left": 3}]

    # AND show gives the grant whole
    assert main(["grants", "show", grant_id]) == 0
    shown = capsys.readouterr().out
    assert "allows     issue_refund: amount <= 500; on any thread of the agent" in shown
    assert f"granted    by {ALICE} via api at {grant['granted_at']}, approving question {grant['question_id']}" in shown
    assert "decided    0 question(s)" in shown

    # WHEN the operator revokes it
    assert main(["grants", "revoke", grant_id]) == 0

    # THEN it is revoked in the operator's name, gone from the live list, listed as revoked with --all, and the next
    # refund within its pin is asked
    assert f"revoked {grant_id} at " in capsys.readouterr().out
    assert main(["grants", "show", grant_id, "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert (kept["revoked_by"], kept["live"]) == ("operator", False)
    assert main(["grants", "list"]) == 0
    assert grant_id not in capsys.readouterr().out
    assert main(["grants", "list", "--all"]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith(grant_id)]
    assert row.endswith("revoked")
    order, _ = _asked(stack, 200)
    assert grant_graphs.REFUNDS[order] == 0


@pytest.mark.usefixtures("cli_target")
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["grants", "show", "issue_refund~no-such-question"], "no grant 'issue_refund~no-such-question'"),
        (["grants", "revoke", "nonsense"], "no grant 'nonsense'; list them with: agent-wait grants list --all"),
        (["grants", "show"], "grants show and grants revoke take one"),
        (["grants", "list", "issue_refund~q"], "grants list takes no id"),
        (["grants", "show", "issue_refund~q", "--all"], "--all is for grants list"),
    ],
)
def test_a_bad_grant_id_is_one_line_on_stderr_and_exit_status_2(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN a grants command names no grant, or a grant that does not exist
    status = main(argv)
    # THEN it says so in one line on stderr, prints nothing on stdout, and exits 2
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.startswith("agent-wait: "), err
    assert said in err
    assert err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("pins", "words"),
    [
        ({"amount": {"at_most": 500}}, "amount <= 500"),
        ({"amount": {"at_least": 10}, "currency": {"equals": "EUR"}}, 'amount >= 10, currency = "EUR"'),
        ({"sku": {"prefix": "A-"}}, 'sku starts with "A-"'),
        ({"path": {"glob": "/tmp/*"}}, 'path matches "/tmp/*"'),
        ({"region": {"one_of": ["eu", "us"]}}, 'region in "eu", "us"'),
        ({}, "any call"),
    ],
)
def test_each_pin_kind_reads_in_words(pins: dict[str, Any], words: str) -> None:
    assert pin_words({"exact": False, "pins": pins}) == words


def test_an_exact_grant_reads_as_this_exact_call() -> None:
    assert pin_words({"exact": True, "pins": {"amount": {"equals": 200}}}) == "this exact call"
