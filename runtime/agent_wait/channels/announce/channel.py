"""The plain announcers as channels: the log line, the signed webhook and the in-memory list, each declared once.

None of them takes answers (their receivers answer through the entry queue or the answer API, as `reply_to` says)
or keeps a record of what it sent. The host always writes the log line, and POSTs to the webhook when
`AGENT_WAIT_WEBHOOK_URL_SECRET_ARN` (or the plain `AGENT_WAIT_WEBHOOK_URL`) is set, signed with
`AGENT_WAIT_WEBHOOK_SECRET_ARN`'s secret; each secret is read once, when the host builds its announcers (at cold
start).
"""

from __future__ import annotations

import json

from agent_wait.channels.announce.log import LogAnnounce
from agent_wait.channels.announce.memory import InMemoryAnnounce
from agent_wait.channels.announce.preview import log_preview, memory_preview, webhook_preview
from agent_wait.channels.announce.webhook import WebhookAnnounce, is_url
from agent_wait.channels.contract import Absent, Channel, ChannelHost
from agent_wait.contract.schema import Settings
from agent_wait.errors import ConfigurationError

__all__ = ("CHANNELS", "LOG", "MEMORY", "WEBHOOK", "build_webhook")

_NO_DOOR = Absent("its receiver answers through the entry queue or the answer API, as the envelope's reply_to says")


def build_log(host: ChannelHost) -> LogAnnounce:
    """The log line every host writes."""
    return LogAnnounce()


def build_webhook(host: ChannelHost) -> WebhookAnnounce | None:
    """The signed webhook: its URL is `AGENT_WAIT_WEBHOOK_URL_SECRET_ARN`'s secret value (a webhook URL carries a
    token), or `AGENT_WAIT_WEBHOOK_URL` in plain text; with `AGENT_WAIT_WEBHOOK_SECRET_ARN` it is signed with that
    secret. None without a URL.

    Raises:
        ConfigurationError: a webhook secret cannot be read, or is not in a form it can use.
    """
    settings = host.settings
    url = _webhook_url(host, settings.webhook_url_secret_arn) if settings.webhook_url_secret_arn else None
    url = url or settings.webhook_url
    if not url:
        return None
    secret = _webhook_secret(host, settings.webhook_secret_arn) if settings.webhook_secret_arn else None
    return WebhookAnnounce(url, secret=secret)


def _webhook_url(host: ChannelHost, secret_arn: str) -> str:
    """The webhook URL stored as the secret's text, surrounding whitespace ignored. Errors never show the value: a
    webhook URL carries a token."""
    variable = Settings.WEBHOOK_URL_SECRET_ARN.value
    url = (host.secret(secret_arn, variable, "the webhook URL") or "").strip()
    if not is_url(url):
        raise ConfigurationError(
            [
                f"{variable}={secret_arn!r}: the secret must be the webhook URL itself, starting with https:// or "
                "http:// (its value is not shown: a webhook URL carries a token)"
            ],
            variables=[variable],
        )
    return url


def _webhook_secret(host: ChannelHost, secret_arn: str) -> str | list[str]:
    """The webhook secret(s) in the secret `secret_arn` (its `SecretString`).

    Two forms: the secret itself (`whsec_<base64>`, the Standard Webhooks form, or any text), or, while
    rotating, a JSON array of secrets newest first: the first signs the `X-Agent-Wait-*` headers and
    every one signs `webhook-signature`. Surrounding whitespace is ignored. Error messages name the
    variable, the ARN and AWS's error code, never the value.
    """
    variable = Settings.WEBHOOK_SECRET_ARN.value

    def refuse(problem: str) -> ConfigurationError:
        return ConfigurationError([f"{variable}={secret_arn!r}: {problem}"], variables=[variable])

    text = host.secret(secret_arn, variable, "the webhook secret")
    if text is None:
        raise refuse("the secret is binary; store the webhook secret as text (SecretString)")
    text = text.strip()
    if not text.startswith(("[", "{")):
        if not text:
            raise refuse("the secret is empty; store the webhook secret, such as 'whsec_' + base64(32 random bytes)")
        return text
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, list) or not parsed or not all(isinstance(item, str) and item.strip() for item in parsed):
        raise refuse(
            "the secret must be the webhook secret itself, or a JSON array of non-empty secret strings, newest "
            "first; it looks like JSON but is neither (a key/value secret is not read)"
        )
    return [item.strip() for item in parsed]


LOG = Channel(
    name=LogAnnounce.name,
    announcer=LogAnnounce,
    build=build_log,
    preview=log_preview,
    door=Absent("a log line takes no answers"),
    record=Absent("each delivery writes its line; nothing is updated or held back"),
)
WEBHOOK = Channel(
    name=WebhookAnnounce.name,
    announcer=WebhookAnnounce,
    build=build_webhook,
    preview=webhook_preview,
    door=_NO_DOOR,
    record=Absent("each delivery is POSTed; a receiver drops what it has seen by the envelope's dedupe_key"),
)
MEMORY = Channel(
    name=InMemoryAnnounce.name,
    announcer=InMemoryAnnounce,
    build=Absent("tests and your own code make one; the host never does"),
    preview=memory_preview,
    door=_NO_DOOR,
    record=Absent("it keeps every envelope it is given, in order"),
)
CHANNELS = (LOG, WEBHOOK, MEMORY)
"""The plain announcers' declarations."""
