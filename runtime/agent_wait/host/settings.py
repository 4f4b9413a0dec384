"""The host's settings, read from the environment once at cold start and checked all together.

`HostSettings.from_env` checks the core variables here; each feature's and channel's are checked in their own
`host/_*_settings.py` (audit, chat, checkpoint, email, identity, push, retention, schedule, sign-in, Slack, webhook), in
the same order every time, so one `ConfigurationError` names every problem.
"""

from __future__ import annotations

import importlib
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.engine.metrics import MetricTags
from agent_wait.engine.versions import on_new_version_setting
from agent_wait.errors import ConfigurationError
from agent_wait.host._a2a_settings import a2a_settings
from agent_wait.host._audit_settings import audit_settings
from agent_wait.host._chat_settings import ShapedWebhookSettings, TeamsSettings, shaped_webhook_settings, teams_settings
from agent_wait.host._checkpoint_settings import PAYLOAD_LIMIT, checkpoint_settings
from agent_wait.host._email_settings import EmailSettings, email_settings
from agent_wait.host._identity_settings import identity_settings
from agent_wait.host._passkey_settings import passkey_settings
from agent_wait.host._push_settings import PushSettings, push_settings
from agent_wait.host._retention_settings import (
    CHANNEL_RECORD_RETENTION,
    CHECKPOINT_RETENTION,
    DECIDED_RETENTION,
    retention_settings,
)
from agent_wait.host._schedule_settings import ScheduleSettings, schedule_settings
from agent_wait.host._sign_in_settings import DEFAULT_SIGN_IN_SCOPES, sign_in_settings
from agent_wait.host._slack_settings import SlackSettings, slack_settings
from agent_wait.host._webhook_settings import webhook_secrets

__all__ = (
    "DEFAULT_SIGN_IN_SCOPES",
    "PAYLOAD_LIMIT",
    "HostRole",
    "HostSettings",
    "load_object",
    "required",
)


class HostRole(StrEnum):
    """Which function reads the settings: each needs its own."""

    ROUTER = "router"
    SWEEP = "sweep"
    API = "api"


_NEEDS = {
    HostRole.ROUTER: (Settings.GRAPH, Settings.TABLE, Settings.CHECKPOINT_TABLE, Settings.DLQ_URL),
    HostRole.SWEEP: (Settings.TABLE, Settings.QUEUE_URL),
    HostRole.API: (Settings.TABLE, Settings.QUEUE_URL),
}


@dataclass(frozen=True, slots=True)
class HostSettings:
    """Everything the router, the sweep and the answer API read from the environment
    (`agent_wait.contract.schema.Settings`)."""

    graph: str | None
    table: str | None
    checkpoint_table: str | None
    queue_url: str | None
    dlq_url: str | None
    topic_arn: str | None
    bus_name: str | None
    webhook_url: str | None
    sweep_limit: int
    lease_seconds: float = 900.0
    """How long the router holds a thread's lease (`AGENT_WAIT_LEASE_SECONDS`)."""
    max_receive_count: int = 5
    """The entry queue's `maxReceiveCount` (`AGENT_WAIT_MAX_RECEIVE_COUNT`); its last receive dead-letters with a
    reason."""
    webhook_secret_arn: str | None = None
    """The Secrets Manager secret that signs webhook deliveries (`AGENT_WAIT_WEBHOOK_SECRET_ARN`), read once at
    cold start; unsigned when None."""
    webhook_url_secret_arn: str | None = None
    """The Secrets Manager secret whose value is the webhook URL (`AGENT_WAIT_WEBHOOK_URL_SECRET_ARN`), read once
    at cold start; never set with `webhook_url`."""
    trusted_senders: frozenset[str] | None = None
    """IAM unique ids whose claims are trusted (`AGENT_WAIT_TRUSTED_SENDERS`); None: every sender is."""
    start_senders: frozenset[str] | None = None
    """IAM unique ids allowed to send starts (`AGENT_WAIT_START_SENDERS`); None: any sender."""
    answer_senders: frozenset[str] | None = None
    """IAM unique ids allowed to send answers (`AGENT_WAIT_ANSWER_SENDERS`); None: any sender."""
    api_url: str | None = None
    """The answer API's base URL (`AGENT_WAIT_API_URL`)."""
    link_keys_arn: str | None = None
    """The Secrets Manager secret with the answer-link keys (`AGENT_WAIT_LINK_KEYS_ARN`)."""
    link_announcers: frozenset[str] = frozenset()
    """Announcer names whose envelopes carry signed links (`AGENT_WAIT_LINK_ANNOUNCERS`)."""
    groups_claim: str | None = None
    """The JWT claim listing a user's groups (`AGENT_WAIT_GROUPS_CLAIM`)."""
    sign_in_url: str | None = None
    """The OIDC authorization endpoint the inbox page signs in at (`AGENT_WAIT_SIGN_IN_URL`)."""
    sign_in_token_url: str | None = None
    """The OIDC token endpoint the inbox page exchanges its code at (`AGENT_WAIT_SIGN_IN_TOKEN_URL`)."""
    sign_in_client_id: str | None = None
    """The public OIDC client the inbox page signs in as (`AGENT_WAIT_SIGN_IN_CLIENT_ID`)."""
    sign_in_scopes: str = DEFAULT_SIGN_IN_SCOPES
    """The scopes the inbox page asks for (`AGENT_WAIT_SIGN_IN_SCOPES`)."""
    checkpoint_bucket: str | None = None
    """The S3 bucket for large checkpoints (`AGENT_WAIT_CHECKPOINT_BUCKET`); None: DynamoDB only."""
    checkpoint_offload_bytes: int | None = None
    """With the bucket, the size over which a checkpoint payload goes to S3 (`AGENT_WAIT_CHECKPOINT_OFFLOAD_BYTES`);
    None: the saver's default."""
    slack: SlackSettings | None = None
    """Slack as an answer channel (`AGENT_WAIT_SLACK_*`); None: off."""
    teams: TeamsSettings | None = None
    """Teams as an answer channel (`AGENT_WAIT_TEAMS_*`, the router and the sweep); None: off."""
    shaped_webhook: ShapedWebhookSettings | None = None
    """A webhook whose payload templates shape (`AGENT_WAIT_SHAPED_WEBHOOK_*`, the router and the sweep); None: off."""
    email: EmailSettings | None = None
    """Email as an answer channel (`AGENT_WAIT_EMAIL_*`); None: off."""
    push: PushSettings | None = None
    """Web push to the inbox (`AGENT_WAIT_PUSH_*`); None: off."""
    metric_tags: MetricTags = field(default_factory=MetricTags)
    """The policy tags time to answer is also drawn by, with their values (`AGENT_WAIT_METRIC_TAGS`)."""
    audit_group: str | None = None
    """The group whose members may read `GET /audit` (`AGENT_WAIT_AUDIT_GROUP`); None: nobody may."""
    decided_retention: timedelta | None = DECIDED_RETENTION
    """How long a decided row is kept after its decision (`AGENT_WAIT_DECIDED_RETENTION`): its TTL; None: kept."""
    checkpoint_retention: timedelta | None = CHECKPOINT_RETENTION
    """How long the LangGraph saver keeps a thread's checkpoints after its last write, while nothing waits on them
    (`AGENT_WAIT_CHECKPOINT_RETENTION`); None: kept."""
    channel_record_retention: timedelta | None = CHANNEL_RECORD_RETENTION
    """How long a channel's record of a question's messages is kept after its last send
    (`AGENT_WAIT_CHANNEL_RECORD_RETENTION`); None: kept."""
    schedules: ScheduleSettings | None = None
    """Precise-deadline schedules (`AGENT_WAIT_SCHEDULE_*`); None: the sweep's minute only."""
    on_new_version: str = "resume"
    """What resuming a question asked under another version does when its policy does not say
    (`AGENT_WAIT_ON_NEW_VERSION`): `resume` while compatible (the default) or `fail` (docs/versions.md)."""
    a2a: Any = None
    """The hosted agent as an A2A agent (`AGENT_WAIT_AGENT_CARD`, `agent_wait.host.a2a.agent.A2aAgent`); None: off."""
    passkey_origin: str | None = None
    """The inbox's origin, whose host is the WebAuthn relying party (`AGENT_WAIT_PASSKEY_ORIGIN`); None: passkeys off,
    and a `require_passkey` question refuses every answer."""

    @classmethod
    def from_env(cls, role: HostRole | str, environ: Mapping[str, str] | None = None) -> HostSettings:
        """Read and check the settings `role` (`router`, `sweep` or `api`) needs.

        Raises:
            ConfigurationError: every missing or malformed variable, named, in one message.
            ConfigurationError: also when `role` is not a `HostRole`.
        """
        if role not in set(HostRole):
            raise ConfigurationError([f"role must be one of {[r.value for r in HostRole]}; got {role!r}"])
        role = HostRole(role)
        env = os.environ if environ is None else environ
        value = {name: (env.get(name.value) or "").strip() or None for name in Settings}
        problems: list[str] = []
        wrong: list[str] = []
        for name in _NEEDS[role]:
            if value[name] is None:
                problems.append(f"{name.value} is not set; the AgentWait construct sets it, or export it")
                wrong.append(name.value)
        graph = value[Settings.GRAPH]
        if graph is not None and (graph.count(":") != 1 or not all(graph.split(":"))):
            problems.append(f"{Settings.GRAPH.value} must look like 'package.module:attribute'; got {graph!r}")
            wrong.append(Settings.GRAPH.value)
        for name, prefix in ((Settings.QUEUE_URL, "http"), (Settings.DLQ_URL, "http"), (Settings.WEBHOOK_URL, "http")):
            if value[name] is not None and not str(value[name]).startswith(prefix):
                shown = _url_shown(str(value[name])) if name is Settings.WEBHOOK_URL else repr(value[name])
                problems.append(f"{name.value} must be a URL starting with http(s)://; got {shown}")
                wrong.append(name.value)
        secret_arn, url_secret_arn = webhook_secrets(value, problems, wrong)
        if value[Settings.TOPIC_ARN] is not None and not str(value[Settings.TOPIC_ARN]).startswith("arn:"):
            problems.append(f"{Settings.TOPIC_ARN.value} must be an SNS topic ARN; got {value[Settings.TOPIC_ARN]!r}")
            wrong.append(Settings.TOPIC_ARN.value)
        limit_text = value[Settings.SWEEP_LIMIT] or "100"
        sweep_limit = int(limit_text) if limit_text.isdigit() else 0
        if sweep_limit < 1:
            problems.append(f"{Settings.SWEEP_LIMIT.value} must be a whole number of at least 1; got {limit_text!r}")
            wrong.append(Settings.SWEEP_LIMIT.value)
        lease_seconds = _whole_number(value[Settings.LEASE_SECONDS], 900, minimum=1, maximum=3600)
        if lease_seconds is None:
            problems.append(
                f"{Settings.LEASE_SECONDS.value} must be a whole number of seconds from 1 to 3600, at least the "
                f"router's timeout; got {value[Settings.LEASE_SECONDS]!r}"
            )
            wrong.append(Settings.LEASE_SECONDS.value)
        max_receive_count = _whole_number(value[Settings.MAX_RECEIVE_COUNT], 5, minimum=1, maximum=1000)
        if max_receive_count is None:
            problems.append(
                f"{Settings.MAX_RECEIVE_COUNT.value} must be the entry queue's maxReceiveCount, a whole number from "
                f"1 to 1000; got {value[Settings.MAX_RECEIVE_COUNT]!r}"
            )
            wrong.append(Settings.MAX_RECEIVE_COUNT.value)
        checkpoint = checkpoint_settings(value, problems, wrong)
        audit = (
            audit_settings(value, problems, wrong)
            | retention_settings(value, problems, wrong)
            | a2a_settings(value, problems, wrong)
        )
        schedules = schedule_settings(value, problems, wrong)
        identity = identity_settings(value, problems, wrong) | passkey_settings(value, problems, wrong)
        sign_in = sign_in_settings(value, problems, wrong)
        slack = slack_settings(value, problems, wrong, posts=role is not HostRole.API)
        announces = role is not HostRole.API  # only the router and the sweep announce
        teams = teams_settings(value, problems, wrong) if announces else None
        shaped = shaped_webhook_settings(value, problems, wrong) if announces else None
        email, push = (
            email_settings(value, problems, wrong) if announces else None,
            push_settings(value, problems, wrong, sends=announces),
        )
        metric_tags = MetricTags.checked(value[Settings.METRIC_TAGS], problems, wrong)
        on_new_version = on_new_version_setting(value[Settings.ON_NEW_VERSION], problems, wrong)
        if problems or lease_seconds is None or max_receive_count is None:
            raise ConfigurationError(problems, variables=wrong)
        return cls(
            graph=graph,
            table=value[Settings.TABLE],
            checkpoint_table=value[Settings.CHECKPOINT_TABLE],
            queue_url=value[Settings.QUEUE_URL],
            dlq_url=value[Settings.DLQ_URL],
            topic_arn=value[Settings.TOPIC_ARN],
            bus_name=value[Settings.BUS_NAME],
            webhook_url=value[Settings.WEBHOOK_URL],
            sweep_limit=sweep_limit,
            lease_seconds=float(lease_seconds),
            max_receive_count=max_receive_count,
            webhook_secret_arn=secret_arn,
            webhook_url_secret_arn=url_secret_arn,
            slack=slack,
            teams=teams,
            shaped_webhook=shaped,
            email=email,
            push=push,
            metric_tags=metric_tags,
            on_new_version=on_new_version,
            **checkpoint,
            **audit,
            **schedules,
            **identity,
            **sign_in,
        )


def _url_shown(url: str) -> str:
    # A webhook URL's path and query may carry a token: show its scheme and host, never the rest.
    parts = urllib.parse.urlsplit(url)
    return f"scheme {parts.scheme!r} and host {parts.hostname!r} (the rest is not shown: it may carry a token)"


def _whole_number(text: str | None, default: int, *, minimum: int, maximum: int) -> int | None:
    """`text` as a whole number in range, `default` when unset, None when it is not one."""
    if text is None:
        return default
    number = int(text) if text.isdigit() else None
    return number if number is not None and minimum <= number <= maximum else None


def load_object(spec: str, *, variable: str = Settings.GRAPH.value) -> Any:
    """Import `package.module:attribute`.

    Raises:
        ConfigurationError: the module cannot be imported or has no such attribute (names `variable`).
    """
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            [f"{variable}={spec!r}: cannot import module {module_name!r} ({exc}); is it bundled with the function?"],
            variables=[variable],
        ) from exc
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ConfigurationError(
            [f"{variable}={spec!r}: module {module_name!r} has no attribute {attribute!r}"], variables=[variable]
        ) from None


def required(value: str | None, setting: Settings) -> str:
    """`value`, or a `ConfigurationError` naming the variable (`HostSettings.from_env` checks it first)."""
    if not value:
        raise ConfigurationError(
            [f"{setting.value} is not set; AgentWait sets it, or export it"], variables=[setting.value]
        )
    return value
