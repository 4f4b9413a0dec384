"""Microsoft Teams and shaped webhooks: `TeamsProps` and `ShapedWebhookProps` as `AgentWait` takes them.

`AgentWait(answer_api=True, teams=TeamsProps(...))` posts each question, its reminders and escalations and its
outcome to a Teams Workflows webhook as Adaptive Cards from the router and the sweep (`agent_wait.channels.teams`), with
buttons that open the answer API's signed confirmation pages. `AgentWait(shaped_webhook=ShapedWebhookProps(...))`
posts each envelope as the JSON its transition's template renders (`agent_wait.channels.shaped`). Each URL stays in a
Secrets Manager secret the caller made outside the stack, so no template or log holds it; only the router and
the sweep may read it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from aws_cdk import Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_secretsmanager as secretsmanager

from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._validate import PropChecks
from agent_wait_cdk.channel_records import ChannelRecordTable

__all__ = (
    "TEAMS_MODES",
    "ShapedWebhookProps",
    "TeamsProps",
    "TeamsSendsTable",
    "check_chat_props",
    "check_shaped_webhook_props",
    "check_teams_props",
    "shaped_webhook_environment",
    "teams_environment",
)

TEAMS_MODES = ("people", "channel")
"""`people`: a card per recipient, with links bound to that person; `channel`: one card, with unbound links only
where anyone may answer."""
TRANSITIONS = (
    "created",
    "answered",
    "expired",
    "cancelled",
    "resumed",
    "failed",
    "reminder",
    "escalated",
    "voted",
)
"""The transitions a shaped webhook's templates are keyed by (with or without `wait.`), besides `default`."""
MAX_TEMPLATES_CHARS = 2048
"""The longest the templates' JSON may be: Lambda allows 4 KB for all of a function's variables together."""
_ADDRESS = re.compile(r"[^@\s<>\"]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")


@dataclass(frozen=True, kw_only=True)
class TeamsProps:
    """Teams as an answer channel, as `AgentWait(answer_api=True, teams=TeamsProps(...))` takes it.

    Make a flow in Teams' Workflows app from the template "Send webhook alerts to a channel" (or a flow of your own
    whose trigger is "When a Teams webhook request is received"), copy its URL into a Secrets Manager secret (its
    text, not key/value) outside the stack, and name the secret here (docs/teams.md).

    Example:
        TeamsProps(
            webhook_url=secretsmanager.Secret.from_secret_name_v2(self, "TeamsWebhook", "agent-wait/teams-webhook"),
            groups={"finance": ["ana@example.com", "ben@example.com"]},
        )
    """

    webhook_url: secretsmanager.ISecret
    """The secret whose value is the flow's webhook URL: `AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN` on the router and the
    sweep, which may read it."""
    mode: str = "people"
    """`people` (a card per person, sent with their address for the flow to post to their chat; links bound to
    them) or `channel` (one card; unbound links only where anyone may answer). `AGENT_WAIT_TEAMS_MODE`."""
    groups: Mapping[str, Sequence[str]] = field(default_factory=dict[str, Sequence[str]])
    """An answerer group to its members' Teams sign-in addresses: in `people` mode each gets a card whose links
    answer as them, in that group. Default none."""
    tags: Mapping[str, Sequence[str]] = field(default_factory=dict[str, Sequence[str]])
    """A policy tag `"key:value"` (or `"*"`) to the addresses that get a question whose policy names no answerers.
    With `groups`, `AGENT_WAIT_TEAMS_RECIPIENTS`. Default none."""


@dataclass(frozen=True, kw_only=True)
class ShapedWebhookProps:
    """A webhook whose JSON payload templates shape, as `AgentWait(shaped_webhook=ShapedWebhookProps(...))` takes it.

    Example:
        ShapedWebhookProps(
            url=secretsmanager.Secret.from_secret_name_v2(self, "ChatHook", "agent-wait/chat-webhook"),
            templates={"created": '{"text": {{ "Waiting for an answer: " ~ question_id }}}'},
        )
    """

    url: secretsmanager.ISecret
    """The secret whose value is the URL to POST to: `AGENT_WAIT_SHAPED_WEBHOOK_URL_ARN` on the router and the sweep,
    which may read it."""
    templates: Mapping[str, str]
    """A transition (`created`, `wait.created`, ...) or `default` to the Jinja2 template that renders its JSON body
    (docs/announcers.md, "Shaped webhooks"); `AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES`. Each is rendered for sample
    questions at the functions' cold start, which fails on a template that does not render JSON."""


def _known(value: object) -> bool:
    return not (isinstance(value, str) and Token.is_unresolved(value))


def _addresses(checks: PropChecks, name: str, mapping: Mapping[str, Sequence[str]], *, tags: bool) -> None:
    for key, addresses in mapping.items():
        if _known(key) and (not key or (tags and key != "*" and (":" not in key or key.startswith(":")))):
            shape = "a policy tag 'key:value' or '*'" if tags else "an answerer group name"
            checks.fail(name, f"keys must be {shape}; got {key!r}")
        if isinstance(addresses, str) or not addresses:
            checks.fail(name, f"values must be non-empty lists of addresses; got {addresses!r} for {key!r}")
            continue
        for address in addresses:
            if _known(address) and not _ADDRESS.fullmatch(str(address)):
                checks.fail(name, f"{address!r} (for {key!r}) is not a sign-in address such as ana@example.com")


def check_teams_props(checks: PropChecks, teams: TeamsProps | None, *, answer_api: bool) -> None:
    """Every problem of `teams`, as `teams.<field>`; the cards' buttons need the answer API and its links."""
    if teams is None:
        return
    if not answer_api:
        checks.fail(
            "teams",
            "needs answer_api=True: a card's buttons open the answer API's signed confirmation pages; pass "
            "answer_api=True with answer_api_props (links on, the default), or drop teams",
        )
    checks = checks.prefixed("teams.")
    if teams.mode not in TEAMS_MODES:
        checks.fail("mode", f"must be 'people' or 'channel'; got {teams.mode!r}")
    _addresses(checks, "groups", teams.groups, tags=False)
    _addresses(checks, "tags", teams.tags, tags=True)
    if teams.mode == "people" and not teams.groups and not teams.tags:
        checks.fail(
            "groups",
            "in 'people' mode, map answerer groups (or tags) to people's addresses, such as "
            "{'finance': ['ana@example.com']}: each card goes to a person; or use mode='channel'",
        )


def teams_environment(teams: TeamsProps, *, sends_table: dynamodb.ITable) -> dict[str, str]:
    """The `AGENT_WAIT_TEAMS_*` variables of the router and the sweep."""
    environment = {
        shapes.ENV_TEAMS_WEBHOOK_URL_ARN: teams.webhook_url.secret_arn,
        shapes.ENV_TEAMS_MODE: teams.mode,
        shapes.ENV_TEAMS_SENDS_TABLE: sends_table.table_name,
    }
    if teams.groups or teams.tags:
        routing = {
            "groups": {k: list(v) for k, v in teams.groups.items()},
            "tags": {k: list(v) for k, v in teams.tags.items()},
        }
        environment[shapes.ENV_TEAMS_RECIPIENTS] = json.dumps(routing, separators=(",", ":"))
    return environment


def check_shaped_webhook_props(checks: PropChecks, shaped: ShapedWebhookProps | None) -> None:
    """Every problem of `shaped` the construct can see, as `shaped_webhook.<field>`; the templates' rendering is
    checked at the functions' cold start (the constructs never import the runtime)."""
    if shaped is None:
        return
    checks = checks.prefixed("shaped_webhook.")
    if not shaped.templates:
        checks.fail("templates", "needs at least one template, such as {'created': '{\"text\": {{ question_id }}}'}")
    known = {*TRANSITIONS, *(f"wait.{t}" for t in TRANSITIONS), "default"}
    for key, text in shaped.templates.items():
        if _known(key) and key not in known:
            checks.fail("templates", f"keys must be a transition ({', '.join(TRANSITIONS)}) or 'default'; got {key!r}")
        if not isinstance(text, str) or (_known(text) and not text.strip()):
            checks.fail("templates", f"the {key!r} template must be non-empty text")
    size = len(_templates_json(shaped))
    if size > MAX_TEMPLATES_CHARS:
        checks.fail(
            "templates",
            f"are {size} characters as JSON, over {MAX_TEMPLATES_CHARS}: Lambda allows 4 KB for all of a function's "
            "variables; shorten them, or share one 'default' template",
        )


def _templates_json(shaped: ShapedWebhookProps) -> str:
    return json.dumps(dict(shaped.templates), separators=(",", ":"))


def shaped_webhook_environment(shaped: ShapedWebhookProps) -> dict[str, str]:
    """The `AGENT_WAIT_SHAPED_WEBHOOK_*` variables of the router and the sweep."""
    return {
        shapes.ENV_SHAPED_WEBHOOK_URL_ARN: shaped.url.secret_arn,
        shapes.ENV_SHAPED_WEBHOOK_TEMPLATES: _templates_json(shaped),
    }


def check_chat_props(
    checks: PropChecks,
    *,
    teams: TeamsProps | None,
    shaped_webhook: ShapedWebhookProps | None,
    answer_api: bool,
    link_announcers: Sequence[str],
) -> None:
    """Every problem of the Teams and shaped webhook props, and a link announcer `shaped` without its webhook."""
    check_teams_props(checks, teams, answer_api=answer_api)
    check_shaped_webhook_props(checks, shaped_webhook)
    if "shaped" in link_announcers and shaped_webhook is None:
        checks.fail("link_announcers", "names 'shaped', which needs shaped_webhook; there is none")


class TeamsSendsTable(ChannelRecordTable):
    """Where each question's Teams cards are recorded: Teams' `ChannelRecordTable` (`question_id` string key, TTL on
    `ttl`, on demand, point-in-time recovery, encrypted at rest, RETAIN by default).

    One item per question, one map attribute per card (`<dedupe_key>|<address or channel>`): each is claimed before
    it is posted and marked accepted after, so a redelivered event posts no card twice (`agent_wait.channels.teams`).
    The router and the sweep may only `UpdateItem` it (`_perms.TEAMS_SENDS`).
    """
