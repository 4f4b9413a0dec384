"""Email as an answer channel: `EmailProps`, the table of each question's emails, and the SES configuration set.

`AgentWait(answer_api=True, email=EmailProps(...))` emails each question from the router and the sweep
(`agent_wait.channels.email`), through SES v2 `SendEmail`, as the verified identity `EmailProps.identity`. Each
recipient's buttons are their own signed links on the answer API, so email needs the API with links on. Every email is
sent with an SES configuration set whose CloudWatch event destination counts bounces and complaints (namespace
`AWS/SES`, metrics `Bounce` and `Complaint`, dimension `ses:configuration-set`), and `AgentWaitAlarms`
alarms on them (`EmailBounces`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parseaddr

from aws_cdk import Stack, Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_ses as ses
from constructs import Construct

from agent_wait_cdk import _grants, _perms
from agent_wait_cdk import _shapes as shapes
from agent_wait_cdk._validate import PropChecks
from agent_wait_cdk.channel_records import ChannelRecordTable, check_channel_record_table

__all__ = (
    "EMAIL_METRICS_DIMENSION",
    "EmailConfigurationSet",
    "EmailProps",
    "EmailSendsTable",
    "check_email_props",
    "email_environment",
    "grant_email",
)

EMAIL_METRICS_DIMENSION = "ses:configuration-set"
"""The dimension of the bounce and complaint metrics: SES's own tag naming the configuration set, on every email."""

_ADDRESS = re.compile(r"[^@\s<>,;\"]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_DOMAIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_TAG = re.compile(r"[^:]+:.*", re.DOTALL)
_CONFIGURATION_SET = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, kw_only=True)
class EmailProps:
    """Email as an answer channel, as `AgentWait(answer_api=True, email=EmailProps(...))` takes it.

    Verify the identity in SES (the domain, or the address) in the stack's region first, and leave the SES sandbox
    (or verify each recipient while you try it out).

    Example:
        EmailProps(
            sender="Approvals <approvals@example.com>",
            groups={"finance": ["ana@example.com", "dana@example.com"]},
            tags={"approver_group:finance-managers": ["max@example.com"], "*": ["desk@example.com"]},
            reply_to=["finance-desk@example.com"],
        )
    """

    sender: str
    """The `From`: an address, or `Name <address>` (`AGENT_WAIT_EMAIL_FROM`)."""
    identity: str | ses.IEmailIdentity | None = None
    """The verified SES identity the functions may send as: a domain name, an address, or an `IEmailIdentity`
    (`ses.EmailIdentity(...)` or `ses.EmailIdentity.from_email_identity_name(...)`). `ses:SendEmail` is granted on
    it alone. Default None: the sender's domain."""
    groups: Mapping[str, Sequence[str]] = field(default_factory=dict[str, Sequence[str]])
    """An answerer group to its members' addresses: a policy's `answerer_groups` are emailed through it, and a
    member's links answer as a member of the group. Default none."""
    tags: Mapping[str, Sequence[str]] = field(default_factory=dict[str, Sequence[str]])
    """A policy tag `"key:value"` (or `"*"` for every other question) to the addresses emailed when the policy
    names no answerers. Default none. `groups` and `tags` together are `AGENT_WAIT_EMAIL_RECIPIENTS`; at least one
    address is needed."""
    reply_to: Sequence[str] = ()
    """`Reply-To` addresses (`AGENT_WAIT_EMAIL_REPLY_TO`). Default none: replies go to the sender."""
    configuration_set_name: str | None = None
    """The name of the SES configuration set created for these emails (`AGENT_WAIT_EMAIL_CONFIGURATION_SET`), 1 to
    64 letters, digits, `_` and `-`. Default None: `<resource_name_prefix>-email` with a prefix, else generated."""
    sends_table: dynamodb.ITable | None = None
    """Where each question's emails are recorded, so none is sent twice (partition key `question_id`, a string;
    TTL on `ttl`). Default None: `EmailSendsTable` is created."""

    @property
    def recipients(self) -> dict[str, dict[str, list[str]]]:
        """`groups` and `tags` as `AGENT_WAIT_EMAIL_RECIPIENTS` holds them."""
        found: dict[str, dict[str, list[str]]] = {}
        if self.groups:
            found["groups"] = {name: list(addresses) for name, addresses in self.groups.items()}
        if self.tags:
            found["tags"] = {tag: list(addresses) for tag, addresses in self.tags.items()}
        return found


def check_email_props(checks: PropChecks, email: EmailProps | None, *, answer_api: bool, links: bool) -> None:
    """Every problem of `email`, as `email.<field>`; its buttons need the answer API with links on."""
    if email is None:
        return
    if not (answer_api and links):
        checks.fail(
            "email",
            "needs answer_api=True with links on (AnswerApiProps.links, the default): each recipient's buttons are "
            "signed links on the answer API; pass answer_api=True with answer_api_props, or drop email",
        )
    checks = checks.prefixed("email.")
    address = sender_address(email.sender)
    if _known(email.sender) and address is None:
        checks.fail("sender", f"must be an address, or 'Name <address>'; got {email.sender!r}")
    if isinstance(email.identity, str) and _known(email.identity):
        if not (_ADDRESS.fullmatch(email.identity) or _DOMAIN.fullmatch(email.identity)):
            checks.fail("identity", f"must be a domain name or an address verified in SES; got {email.identity!r}")
        elif address is not None and not _covers(email.identity, address):
            checks.fail(
                "identity",
                f"must be the sender's address or domain (or a parent domain): SES refuses a From it does not cover; "
                f"got {email.identity!r} for the sender {address!r}",
            )
    if not any(email.groups.values()) and not any(email.tags.values()):
        checks.fail(
            "groups",
            "or email.tags must name at least one address, such as tags={'*': ['approvals@example.com']}; "
            "otherwise no question is emailed",
        )
    for group, addresses in email.groups.items():
        if _known(group) and not group:
            checks.fail("groups", "keys must be answerer group names; got ''")
        _check_addresses(checks, "groups", group, addresses)
    for tag, addresses in email.tags.items():
        if _known(tag) and not (tag == "*" or _TAG.fullmatch(tag)):
            checks.fail(
                "tags", f"keys must be a policy tag 'key:value' (such as 'approver_group:finance') or '*'; got {tag!r}"
            )
        _check_addresses(checks, "tags", tag, addresses)
    for reply in email.reply_to:
        if _known(reply) and not _ADDRESS.fullmatch(reply):
            checks.fail("reply_to", f"must list addresses; {reply!r} is not one")
    name = email.configuration_set_name
    if name is not None and _known(name) and not _CONFIGURATION_SET.fullmatch(name):
        checks.fail(
            "configuration_set_name", f"must be 1 to 64 letters, digits, '_' and '-' (SES's rule); got {name!r}"
        )
    check_channel_record_table(checks, "sends_table", email.sends_table)


def _check_addresses(checks: PropChecks, prop: str, key: str, addresses: Sequence[str]) -> None:
    if isinstance(addresses, str):
        checks.fail(prop, f"values must be lists of addresses; got the string {addresses!r} for {key!r}")
        return
    for address in addresses:
        if _known(address) and not _ADDRESS.fullmatch(address):
            checks.fail(prop, f"values must be addresses (local@domain.tld); got {address!r} for {key!r}")


def sender_address(sender: str) -> str | None:
    """The address in `sender` (`Name <address>` or an address), or None when it holds none, or a line break."""
    if any(c in sender for c in "\r\n"):
        return None
    address = parseaddr(sender)[1]
    return address if _ADDRESS.fullmatch(address) else None


def _covers(identity: str, address: str) -> bool:
    """Whether SES lets `identity` send as `address`: the address itself, its domain, or a parent domain."""
    identity, address = identity.lower(), address.lower()
    domain = address.rpartition("@")[2]
    return identity in (address, domain) or ("@" not in identity and domain.endswith(f".{identity}"))


def _known(value: str) -> bool:
    return not Token.is_unresolved(value)


def identity_name(email: EmailProps) -> str:
    """The SES identity's name: the one given, else the sender's domain."""
    if isinstance(email.identity, str):
        return email.identity
    if email.identity is not None:
        return email.identity.email_identity_name
    return (sender_address(email.sender) or "").rpartition("@")[2]


def identity_arn(scope: Construct, email: EmailProps) -> str:
    """The SES identity's ARN in the stack's account and region."""
    if email.identity is not None and not isinstance(email.identity, str):
        return email.identity.email_identity_arn
    return Stack.of(scope).format_arn(service="ses", resource="identity", resource_name=identity_name(email))


def email_environment(
    email: EmailProps, *, sends_table: dynamodb.ITable, configuration_set: ses.IConfigurationSet
) -> dict[str, str]:
    """The `AGENT_WAIT_EMAIL_*` variables of the router and the sweep."""
    environment = {
        shapes.ENV_EMAIL_FROM: email.sender,
        shapes.ENV_EMAIL_RECIPIENTS: json.dumps(email.recipients, separators=(",", ":")),
        shapes.ENV_EMAIL_SENDS_TABLE: sends_table.table_name,
        shapes.ENV_EMAIL_CONFIGURATION_SET: configuration_set.configuration_set_name,
    }
    if email.reply_to:
        environment[shapes.ENV_EMAIL_REPLY_TO] = ",".join(email.reply_to)
    return environment


class EmailSendsTable(ChannelRecordTable):
    """Where each question's emails are recorded: email's `ChannelRecordTable` (`question_id` string key, TTL on
    `ttl`, on demand, point-in-time recovery, encrypted at rest, RETAIN by default).

    One item per question, one map attribute per email (`created:<address>`, `reminder:<n>:<address>`, ...): each
    is claimed before it is sent and marked with SES's message id after, so a redelivered event emails nobody twice
    (`agent_wait.channels.email`). The router and the sweep may `GetItem` and `UpdateItem` it (`_perms.EMAIL_SENDS`).
    """


class EmailConfigurationSet(Construct):
    """The SES configuration set every question's email is sent with, counting its bounces and complaints.

    Its CloudWatch event destination publishes `Bounce` and `Complaint` to namespace `AWS/SES` with the dimension
    `ses:configuration-set` (SES's auto-tag, its value this set's name), which `AgentWaitAlarms` watches.
    Reputation metrics are on, so SES's account-level bounce and complaint rates count these emails too.

    Args:
        scope: the parent construct.
        id: the construct id.
        configuration_set_name: a fixed name. Default None: generated.
    """

    def __init__(self, scope: Construct, id: str, *, configuration_set_name: str | None = None) -> None:
        super().__init__(scope, id)
        self.configuration_set = ses.ConfigurationSet(
            self, "Resource", configuration_set_name=configuration_set_name, reputation_metrics=True
        )
        name = self.configuration_set.configuration_set_name
        self.event_destination = self.configuration_set.add_event_destination(
            "BouncesAndComplaints",
            destination=ses.EventDestination.cloud_watch_dimensions(
                [
                    ses.CloudWatchDimension(
                        name=EMAIL_METRICS_DIMENSION,
                        source=ses.CloudWatchDimensionSource.MESSAGE_TAG,
                        default_value=name,
                    )
                ]
            ),
            events=[ses.EmailSendingEvent.BOUNCE, ses.EmailSendingEvent.COMPLAINT],
        )

    @property
    def configuration_set_name(self) -> str:
        return self.configuration_set.configuration_set_name

    @property
    def configuration_set_arn(self) -> str:
        return Stack.of(self).format_arn(
            service="ses", resource="configuration-set", resource_name=self.configuration_set_name
        )


def grant_email(
    grantee: iam.IGrantable,
    *,
    identity: str,
    configuration_set_arn: str,
    sends_table: dynamodb.ITable,
) -> iam.Grant:
    """`ses:SendEmail`/`SendRawEmail` as the identity with the configuration set (SES authorizes both resources);
    `dynamodb:GetItem`/`UpdateItem` on the sends table (and its customer managed key, if any)."""
    send = iam.Grant.add_to_principal(
        grantee=grantee, actions=list(_perms.SES_SEND), resource_arns=[identity, configuration_set_arn]
    )
    return send.combine(_grants.grant_channel_record(grantee, sends_table, _perms.EMAIL_SENDS))
