"""The local Teams webhook and `/dev/teams` without a stack: the cards a body carries are kept (newest last, at most
`MAX_CARDS`), a body Teams would refuse is refused, the page and its files are served (the renderer pinned to the
`adaptivecards` package it came from), and the stack's variables point Teams at the local webhook."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from agent_wait.contract.schema import Settings
from agent_wait.local.teams_preview import (
    TEAMS_PAGE_PATH,
    TEAMS_WEBHOOK_PATH,
    TeamsCards,
    route_teams_locally,
)

RENDERER_SHA256 = "5e7c13f3300ae7b89b34703501e08d709fbb6635f1c6755b92495577a77344f2"
"""`dist/adaptivecards.min.js` of the npm package adaptivecards 3.0.6 (its tarball's sha1:
1ad7232ef1296dc5c7f89fadae05452bcdafb25b, as `npm view adaptivecards@3.0.6 dist.shasum` says)."""


def _body(question_id: str = "q-1", **about: Any) -> bytes:
    card = {"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "text": question_id}]}
    message = {
        "type": "message",
        "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive", "content": card}],
        "agent_wait": {"event": "wait.created", "question_id": question_id, **about},
    }
    return json.dumps(message).encode()


def test_the_webhook_keeps_each_card_and_the_page_lists_them_newest_first() -> None:
    cards = TeamsCards(limit=2)
    for question_id in ("q-1", "q-2", "q-3"):
        status, _, _ = cards.handle("POST", TEAMS_WEBHOOK_PATH, _body(question_id, recipient="ana@example.com"))
        assert status == 202
    kept = cards.received()
    assert [c["question_id"] for c in kept] == ["q-2", "q-3"]  # the oldest dropped past the limit
    assert kept[0]["recipient"] == "ana@example.com"
    found = cards.handle("GET", f"{TEAMS_PAGE_PATH}/cards.json", b"")
    assert found is not None
    assert [c["question_id"] for c in json.loads(found[1])] == ["q-3", "q-2"]


@pytest.mark.parametrize("body", [b"", b"[]", b'{"type": "message"}', b'{"attachments": []}', b"{nope"])
def test_a_body_teams_would_refuse_is_refused_and_kept_nowhere(body: bytes) -> None:
    cards = TeamsCards()
    found = cards.handle("POST", TEAMS_WEBHOOK_PATH, body)
    assert found is not None
    assert found[0] == 400
    assert cards.received() == []


def test_the_page_and_its_files_are_served_and_nothing_else() -> None:
    cards = TeamsCards()
    page = cards.handle("GET", TEAMS_PAGE_PATH, b"")
    assert page is not None
    assert page[0] == 200
    assert b"/dev/teams/adaptivecards.min.js" in page[1]
    assert "script-src 'self'" in page[2]["Content-Security-Policy"]
    renderer = cards.handle("GET", "/dev/teams/adaptivecards.min.js", b"")
    assert renderer is not None
    assert hashlib.sha256(renderer[1]).hexdigest() == RENDERER_SHA256
    for path in ("/dev/teams/teams.js", "/dev/teams/teams.css"):
        assert (cards.handle("GET", path, b"") or (0,))[0] == 200
    assert cards.handle("GET", "/dev/teams/adaptivecards.LICENSE.txt", b"") is None
    assert cards.handle("GET", "/dev/slack", b"") is None
    assert cards.handle("DELETE", TEAMS_PAGE_PATH, b"") is None


class _Secrets:
    def __init__(self) -> None:
        self.created: dict[str, str] = {}

    def create_secret(self, **call: str) -> dict[str, str]:  # boto3's keyword names
        self.created[call["Name"]] = call["SecretString"]
        return {"ARN": f"arn:aws:secretsmanager:us-east-1:123456789012:secret:{call['Name']}-AbCdEf"}


def test_the_stack_points_teams_at_the_local_webhook_in_channel_mode_unless_it_has_teams_of_its_own() -> None:
    secrets = _Secrets()
    changes = route_teams_locally({}, "http://127.0.0.1:8123/", secrets, name="dev-1")
    assert secrets.created == {"dev-1-local-teams-webhook": "http://127.0.0.1:8123/dev/teams/webhook"}
    assert changes[Settings.TEAMS_MODE.value] == "channel"
    assert changes[Settings.TEAMS_WEBHOOK_URL_ARN.value].endswith(":secret:dev-1-local-teams-webhook-AbCdEf")
    own = {
        Settings.TEAMS_WEBHOOK_URL_ARN.value: "arn:aws:secretsmanager:us-east-1:1:secret:x",
        "AGENT_WAIT_TEAMS_MODE": "people",
    }
    changes = route_teams_locally(own, "http://127.0.0.1:8123", _Secrets(), name="dev-2")
    assert set(changes) == {Settings.TEAMS_WEBHOOK_URL_ARN.value}  # its mode and recipients stay


def test_a_stack_without_teams_of_its_own_records_the_local_cards_once(world: Any, caplog: Any) -> None:
    """The local webhook gets the cards of a stack with no Teams in its template; a table made in the emulator keeps
    each once, so `agent-wait dev` neither posts twice nor warns that it might."""
    import uuid

    local = world.local
    table = local.environment[Settings.TEAMS_SENDS_TABLE.value]
    assert local.client("dynamodb").describe_table(TableName=table)["Table"]["TableStatus"] == "ACTIVE"
    local.cold_start()
    thread = f"teams-once-{uuid.uuid4().hex[:8]}"
    question = world.question_of(world.start(thread, 900))
    cards = [c for c in local.teams_cards.received() if c["question_id"] == question]
    assert [c["event"] for c in cards] == ["wait.created"]
    assert "posted again" not in caplog.text
