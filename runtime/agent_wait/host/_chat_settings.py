"""The chat webhooks' settings of the host, Teams (`AGENT_WAIT_TEAMS_*`) and shaped webhooks
(`AGENT_WAIT_SHAPED_WEBHOOK_*`), read and checked with the rest of `HostSettings`. Only the router and the sweep
announce, so only they read them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError, WebhookTemplateError
from agent_wait.host._patterns import SECRET_ARN

__all__ = ("ShapedWebhookSettings", "TeamsSettings", "shaped_webhook_settings", "teams_settings")

_MODES = ("people", "channel")


@dataclass(frozen=True, slots=True)
class TeamsSettings:
    """Teams as an answer channel: the webhook's secret, who gets the cards and how."""

    webhook_url_arn: str
    """The secret whose value is the Workflows webhook's URL (`AGENT_WAIT_TEAMS_WEBHOOK_URL_ARN`)."""
    mode: str
    """`people` or `channel` (`AGENT_WAIT_TEAMS_MODE`)."""
    recipients: Any = None
    """Who each question's cards go to in `people` mode (`agent_wait.channels.recipients.RecipientRouting`)."""
    sends_table: str | None = None
    """Where each card is claimed and marked accepted (`AGENT_WAIT_TEAMS_SENDS_TABLE`); None posts every card on
    every delivery."""


@dataclass(frozen=True, slots=True)
class ShapedWebhookSettings:
    """A shaped webhook: its URL's secret and its templates, checked."""

    url_arn: str
    """The secret whose value is the URL (`AGENT_WAIT_SHAPED_WEBHOOK_URL_ARN`)."""
    templates: Mapping[str, str]
    """Transition or `default` → template text (`AGENT_WAIT_SHAPED_WEBHOOK_TEMPLATES`), each checked."""


def _secret_arn(value: Mapping[Settings, str | None], name: Settings, problems: list[str], wrong: list[str]) -> None:
    arn = value[name]
    if arn is not None and not SECRET_ARN.fullmatch(arn):
        problems.append(f"{name.value} must be a Secrets Manager secret ARN; got {arn!r}")
        wrong.append(name.value)


def teams_settings(value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]) -> TeamsSettings | None:
    """The Teams settings when the webhook is set, checked; a mode or recipients without it is a problem too."""
    arn, mode, recipients = (
        value[Settings.TEAMS_WEBHOOK_URL_ARN],
        value[Settings.TEAMS_MODE],
        value[Settings.TEAMS_RECIPIENTS],
    )
    if arn is None:
        for name in (Settings.TEAMS_MODE, Settings.TEAMS_RECIPIENTS, Settings.TEAMS_SENDS_TABLE):
            if value[name] is not None:
                problems.append(f"{name.value} is set but {Settings.TEAMS_WEBHOOK_URL_ARN.value} is not")
                wrong.append(name.value)
        return None
    _secret_arn(value, Settings.TEAMS_WEBHOOK_URL_ARN, problems, wrong)
    mode = mode or "people"
    if mode not in _MODES:
        problems.append(f"{Settings.TEAMS_MODE.value} must be 'people' or 'channel'; got {mode!r}")
        wrong.append(Settings.TEAMS_MODE.value)
    routing = None
    if recipients is not None:
        from agent_wait.channels.recipients import RecipientRouting

        try:
            routing = RecipientRouting.parse(recipients, variable=Settings.TEAMS_RECIPIENTS.value)
        except ConfigurationError as exc:
            problems.extend(exc.problems)
            wrong.append(Settings.TEAMS_RECIPIENTS.value)
    elif mode == "people":
        problems.append(
            f"{Settings.TEAMS_RECIPIENTS.value} is not set: Teams in 'people' mode sends each card to a person; map "
            f"answerer groups or tags to their addresses, or set {Settings.TEAMS_MODE.value}=channel"
        )
        wrong.append(Settings.TEAMS_RECIPIENTS.value)
    sends_table = value[Settings.TEAMS_SENDS_TABLE]
    return TeamsSettings(webhook_url_arn=arn, mode=mode, recipients=routing, sends_table=sends_table)


def shaped_webhook_settings(
    value: Mapping[Settings, str | None], problems: list[str], wrong: list[str]
) -> ShapedWebhookSettings | None:
    """The shaped webhook's settings when either is set: both are needed, and every template must render JSON."""
    arn, text = value[Settings.SHAPED_WEBHOOK_URL_ARN], value[Settings.SHAPED_WEBHOOK_TEMPLATES]
    if arn is None and text is None:
        return None
    if arn is None or text is None:
        missing = Settings.SHAPED_WEBHOOK_URL_ARN if arn is None else Settings.SHAPED_WEBHOOK_TEMPLATES
        problems.append(f"{missing.value} is not set: a shaped webhook needs its URL's secret and its templates")
        wrong.append(missing.value)
        return None
    _secret_arn(value, Settings.SHAPED_WEBHOOK_URL_ARN, problems, wrong)
    variable = Settings.SHAPED_WEBHOOK_TEMPLATES.value
    try:
        templates = json.loads(text)
    except (ValueError, RecursionError):
        templates = None
    if not isinstance(templates, dict) or not all(isinstance(t, str) for t in templates.values()):
        problems.append(
            f'{variable} must be a JSON object of template texts, such as {{"created": "{{\\"text\\": {{{{ '
            f'question_id }}}}}}"}}; got {_shown(text)}'
        )
        wrong.append(variable)
        return None
    from agent_wait.channels.shaped import check_templates

    try:
        check_templates(templates)
    except WebhookTemplateError as exc:
        problems.append(f"{variable}: {exc.message}")
        wrong.append(variable)
        return None
    return ShapedWebhookSettings(url_arn=arn, templates=templates)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:79] + "…")
