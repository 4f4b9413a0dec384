"""What the answer API's routes work with, built once per cold start (or given directly, locally and in tests)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_wait.common.times import utc_now
from agent_wait.contract.schema import Settings
from agent_wait.engine.checks import Answerer, answerer_for
from agent_wait.engine.extend import ExtendService
from agent_wait.engine.handover import AnswerService
from agent_wait.host._a2a import a2a_service
from agent_wait.host._channels import channel_doors
from agent_wait.host._precise import deadline_schedules
from agent_wait.host.api._push_inbox import push_inbox
from agent_wait.host.links import link_keyring
from agent_wait.host.settings import DEFAULT_SIGN_IN_SCOPES, HostSettings, required
from agent_wait.ledger import Ledger
from agent_wait.people.keys import address_key

__all__ = ("DEFAULT_GROUPS_CLAIMS", "ApiContext", "SignIn", "answerer_from_claims", "groups_from_claims")

DEFAULT_GROUPS_CLAIMS = ("cognito:groups", "groups")
"""Claims read for a user's groups, in order, when `AGENT_WAIT_GROUPS_CLAIM` is not set."""


@dataclass(frozen=True, slots=True)
class SignIn:
    """How the inbox page signs a person in: the OIDC authorization code flow with PKCE, as a public client.

    Example:
        SignIn(
            authorize_url="https://example.auth.us-east-1.amazoncognito.com/oauth2/authorize",
            token_url="https://example.auth.us-east-1.amazoncognito.com/oauth2/token",
            client_id="4tq0examplec1ient",
        )
    """

    authorize_url: str
    """The issuer's authorization endpoint (`AGENT_WAIT_SIGN_IN_URL`)."""
    token_url: str
    """The issuer's token endpoint (`AGENT_WAIT_SIGN_IN_TOKEN_URL`); the page posts the code and verifier there."""
    client_id: str
    """The public client, without a secret (`AGENT_WAIT_SIGN_IN_CLIENT_ID`)."""
    scopes: str = DEFAULT_SIGN_IN_SCOPES
    """Space-separated scopes (`AGENT_WAIT_SIGN_IN_SCOPES`)."""

    @classmethod
    def from_settings(cls, settings: HostSettings) -> SignIn | None:
        """The sign-in the settings name, or None when they name none (the page then asks for a token)."""
        if not (settings.sign_in_url and settings.sign_in_token_url and settings.sign_in_client_id):
            return None
        return cls(
            authorize_url=settings.sign_in_url,
            token_url=settings.sign_in_token_url,
            client_id=settings.sign_in_client_id,
            scopes=settings.sign_in_scopes,
        )


@dataclass
class ApiContext:
    """The answer API's dependencies.

    Args:
        ledger: the question ledger (read, and decided through `service`).
        service: decides questions and hands resumes to the entry queue.
        link_keys: the keys that verify signed answer links (`LinkKeys`, or a `LinkKeyring` that follows a
            rotation); None when links are off.
        groups_claims: the JWT claims that list a user's groups.
        clock: returns now (UTC).
        sign_in: how the inbox page signs people in; None: it asks for a bearer token.
        slack: Slack's button clicks and modals (`agent_wait.channels.slack.SlackInteractions`); None: Slack is off.
        audit_group: the group whose members may read `GET /audit`; None: nobody may.
        extend: moves deadlines (`agent_wait.engine.extend.ExtendService`).
    """

    ledger: Ledger
    service: AnswerService
    link_keys: Any = None
    groups_claims: tuple[str, ...] = DEFAULT_GROUPS_CLAIMS
    clock: Callable[[], datetime] = field(default=utc_now)
    sign_in: SignIn | None = None
    slack: Any = None
    audit_group: str | None = None
    extend: ExtendService | None = None
    """Moves deadlines (`POST /questions/{id}/extend`); None: one on `ledger` without schedules is made when needed."""
    a2a: Any = None
    """The hosted agent over A2A (`agent_wait.host.a2a.handler.A2aService`); None: A2A is off."""
    passkeys: Any = None
    """Registers passkeys and makes the options that confirm an answer (`agent_wait.host.passkeys.WebAuthnPasskeys`,
    also `service`'s verifier); None: passkeys are off."""
    push: Any = None
    """The VAPID public key and the push subscriptions (`host.api._push_inbox.PushInbox`); None: web push is off."""
    mcp: Any = None
    """The MCP server's asker (`agent_wait.mcp.asking.PersonAsker`, `POST /mcp`); None: the MCP routes answer 404."""

    @classmethod
    def from_settings(
        cls, settings: HostSettings, *, session: Any = None, metrics: Any = None, log: Any = None
    ) -> ApiContext:
        """The deployed API's context: the DynamoDB ledger, the SQS entry queue, the groups claims, the inbox's
        sign-in and, when `AGENT_WAIT_LINK_KEYS_ARN` is set, the keys that verify signed answer links.

        Raises:
            ConfigurationError: the link keys cannot be read or are not in their form (`LinkKeys.load`).
        """
        import boto3

        from agent_wait.aws import DynamoDbLedger
        from agent_wait.engine import SqsEntryQueue

        table = required(settings.table, Settings.TABLE)
        queue_url = required(settings.queue_url, Settings.QUEUE_URL)
        session = session or boto3.Session()
        ledger_client = session.client("dynamodb")
        ledger = DynamoDbLedger(table, client=ledger_client, closed_ttl=settings.decided_retention)
        queue = SqsEntryQueue(queue_url, client=session.client("sqs"))
        passkeys = None
        if settings.passkey_origin:  # passkeys kept on the question table (`agent_wait.aws.passkeys`)
            from agent_wait.aws.passkeys import DynamoDbPasskeyBook
            from agent_wait.host.passkeys import WebAuthnPasskeys

            book = DynamoDbPasskeyBook(table, client=session.client("dynamodb"))
            passkeys = WebAuthnPasskeys(book, origin=settings.passkey_origin)
        service = AnswerService(ledger, queue, metrics=metrics, log=log, passkeys=passkeys)
        claims = (settings.groups_claim,) if settings.groups_claim else DEFAULT_GROUPS_CLAIMS
        link_keys = None
        if settings.link_keys_arn:  # signed answer links: read at cold start, again when they may have rotated
            link_keys = link_keyring(settings.link_keys_arn, client=session.client("secretsmanager"))
        # Each channel's door (Slack's: its signing secret and bot token read at cold start), by channel name.
        doors = channel_doors(settings, session=session, service=service, find=ledger.find, clock=utc_now)
        schedules = deadline_schedules(settings, session=session, metrics=metrics, log=log)
        a2a = a2a_service(settings, ledger, service, client=ledger_client, log=log) if settings.a2a else None
        return cls(
            a2a=a2a,
            mcp=_mcp_asker(ledger, service, settings),
            extend=ExtendService(ledger, schedules=schedules, metrics=metrics, log=log),
            ledger=ledger,
            service=service,
            link_keys=link_keys,
            groups_claims=claims,
            sign_in=SignIn.from_settings(settings),
            slack=doors.get("slack"),
            audit_group=settings.audit_group,
            passkeys=passkeys,
            push=push_inbox(settings, session=session),
        )


def _mcp_asker(ledger: Ledger, service: AnswerService, settings: HostSettings) -> Any:
    """The MCP server's asker when the deployment names its policies (`AGENT_WAIT_MCP_POLICIES`), else None."""
    import os

    from agent_wait.mcp.policies import McpPolicies

    policies = McpPolicies.from_env(os.environ)
    if policies is None:
        return None
    from agent_wait.host._wiring import reply_to_for
    from agent_wait.mcp.asking import PersonAsker

    return PersonAsker(ledger, policies, service=service, reply_to=reply_to_for(settings))


def groups_from_claims(claims: Mapping[str, Any], names: tuple[str, ...] = DEFAULT_GROUPS_CLAIMS) -> tuple[str, ...]:
    """A user's groups from JWT claims, whatever shape the issuer and API Gateway gave them.

    A list, a JSON array string, API Gateway's flattened `"[finance ops]"`, or a comma- or space-separated
    string are all read; the first claim in `names` that is present wins.
    """
    for name in names:
        value = claims.get(name)
        if value is None:
            continue
        if isinstance(value, list):
            return tuple(str(v) for v in value if str(v))
        text = str(value).strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                parsed = text.strip("[]").replace(",", " ").split()
            return tuple(str(v) for v in parsed if str(v))
        return tuple(part for part in text.replace(",", " ").split() if part)
    return ()


def answerer_from_claims(claims: Mapping[str, Any], *, groups_claims: tuple[str, ...], via: str = "api") -> Answerer:
    """The person behind a verified JWT, with their groups (`agent_wait.engine.answerer_for`).

    Their key is their `email` only when the issuer says it is verified (`email_verified`: a user who may set their
    own address could otherwise answer, or vote, under someone else's), else their issuer and subject (`iss#sub`),
    which nobody can change. Never a username (`cognito:username`): a pool may let a user pick one shaped like
    someone else's address. The subject is kept beside the key (`sender`, `subject`), so the same subject is one
    person even in a token without its address.
    """
    subject = str(claims.get("sub") or "")
    issuer = str(claims.get("iss") or "")
    proven_subject = f"{issuer}#{subject}" if issuer else subject or None
    email = claims.get("email") if email_verified(claims) else None
    return answerer_for(
        via,
        person=address_key(email) or proven_subject,
        subject=proven_subject,
        groups=groups_from_claims(claims, groups_claims),
    )


def email_verified(claims: Mapping[str, Any]) -> bool:
    """Whether the token says its `email` is verified: `true`, or `"true"` as API Gateway passes claims."""
    verified = claims.get("email_verified")
    return verified is True or (isinstance(verified, str) and verified.strip().lower() == "true")
