"""Builds the emulator's IAM check for one local stack: the template's roles, and what only the emulator does.

The three functions share one process, so they share one environment: each runs with every other's settings too,
and with the settings the emulator adds for the doors it serves whatever the template says (link keys, an email
sender and sends table, a Teams webhook and sends table, receivers for webhooks whose secret holds no URL here).
A function judged on a setting it does not have on AWS would be refused calls it never makes there. So, function by
function:

- a setting the template gives this function, with the value it runs with: judged by the role, as on AWS;
- the same setting pointed by the emulator at a stand-in secret (a webhook's receiver): judged as the template's
  secret, which the role must grant (`LocalIam.aliases`);
- a setting the template does not give this function (another function's, or the emulator's own): what it names is
  granted to the function here, with the calls that kind of resource takes (`_BORROWED`), and its KMS key.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from email.utils import parseaddr
from typing import Any

from agent_wait.contract.schema import Settings
from agent_wait.local.deploy import ACCOUNT, REGION, UNRESOLVED, EmulatorDeployment
from agent_wait.local.iam import LocalIam
from agent_wait.local.iam_policy import PolicyDocument
from agent_wait.local.iam_template import TemplateIam, template_iam
from agent_wait.local.template import function_environments

__all__ = ("local_iam",)


def local_iam(
    template: Mapping[str, Any],
    deployment: EmulatorDeployment,
    *,
    running: Mapping[str, str],
    client: Callable[[str], Any],
    log: logging.Logger,
) -> LocalIam:
    """The check for a stack whose functions run with the `running` settings (see the module docstring).

    Args:
        template: the synthesized template.
        deployment: the template's deployment on the emulator (it resolves the policies).
        running: the settings the functions run with, the emulator's own included.
        client: a boto3 client factory on the emulator (the operator's).
        log: where refusals are logged.
    """
    iam = template_iam(template, deployment.resolve_document)
    declared = function_environments(template)
    aliases: dict[str, str] = {}
    grants: dict[str, tuple[PolicyDocument, ...]] = {}
    for handler in iam.roles:
        own = {name: deployment.resolve_document(value) for name, value in declared.get(handler, {}).items()}
        borrowed: dict[str, str] = {}
        for name, value in running.items():
            template_value = own.get(name)
            if name not in own or not isinstance(template_value, str) or template_value.startswith(UNRESOLVED):
                borrowed[name] = value
            elif value != template_value and value.startswith("arn:aws:secretsmanager:"):
                aliases[value] = _complete(template_value)  # a stand-in for the template's secret: judged as that
        statements = _grants(borrowed, running, aliases, iam)
        if statements:
            grants[handler] = (
                PolicyDocument.parse("settings this function has only on the emulator", {"Statement": statements}),
            )
    return LocalIam(iam, client=client, account=ACCOUNT, aliases=aliases, local_grants=grants, log=log)


_TABLE = ("dynamodb:*",)
_BORROWED: dict[str, tuple[str, ...]] = {
    Settings.CHECKPOINT_BUCKET.value: ("s3:*",),
    Settings.QUEUE_URL.value: ("sqs:*",),
    Settings.DLQ_URL.value: ("sqs:*",),
    Settings.TOPIC_ARN.value: ("sns:Publish",),
    Settings.BUS_NAME.value: ("events:PutEvents",),
    Settings.EMAIL_FROM.value: ("ses:SendEmail", "ses:SendRawEmail"),
    Settings.SCHEDULE_GROUP.value: ("scheduler:*",),
    Settings.SCHEDULE_ROLE_ARN.value: ("iam:PassRole",),
}
"""What a borrowed setting's resource is granted, besides a secret (`GetSecretValue`) and a table (`dynamodb:*`)."""
_FINDING_DOORS = (Settings.SLACK_BOT_TOKEN_ARN.value, Settings.TEAMS_WEBHOOK_URL_ARN.value, Settings.EMAIL_FROM.value)
"""A borrowed door that finds a question's row by its id (`ledger.find`: `Query` on `by_question`), as the construct
grants a function that announces through it."""


def _grants(
    borrowed: Mapping[str, str], running: Mapping[str, str], aliases: Mapping[str, str], iam: TemplateIam
) -> list[dict[str, Any]]:
    statements = []
    table = running.get(Settings.TABLE.value)
    if table and any(name in borrowed for name in _FINDING_DOORS):
        question_table = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}"
        statements.append({"Effect": "Allow", "Action": ["dynamodb:Query"], "Resource": f"{question_table}/index/*"})
    for name, value in borrowed.items():
        resources = _resources(name, aliases.get(value, value), running)
        if value.startswith("arn:aws:secretsmanager:"):
            actions: tuple[str, ...] = ("secretsmanager:GetSecretValue",)
        elif name.endswith("_TABLE"):
            actions = _TABLE
        else:
            actions = _BORROWED.get(name, ())
        if actions and resources:
            statements.append({"Effect": "Allow", "Action": list(actions), "Resource": resources})
            keys = [iam.keys[r] for r in resources if r in iam.keys]
            if keys:
                statements.append(
                    {"Effect": "Allow", "Action": ["kms:Decrypt", "kms:GenerateDataKey"], "Resource": keys}
                )
    return statements


def _resources(name: str, value: str, running: Mapping[str, str]) -> list[str]:
    """The ARNs a setting's value names."""
    if value.startswith("arn:"):
        return [value]
    if name.endswith("_TABLE"):
        table = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{value}"
        return [table, f"{table}/index/*"]
    if name == Settings.CHECKPOINT_BUCKET.value:
        return [f"arn:aws:s3:::{value}", f"arn:aws:s3:::{value}/*"]
    if name in (Settings.QUEUE_URL.value, Settings.DLQ_URL.value):
        owner, queue = value.rstrip("/").split("/")[-2:]
        return [f"arn:aws:sqs:{REGION}:{owner}:{queue}"]
    if name == Settings.BUS_NAME.value:
        return [f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{value}"]
    if name == Settings.SCHEDULE_GROUP.value:
        return [f"arn:aws:scheduler:{REGION}:{ACCOUNT}:schedule/{value}/*"]
    if name == Settings.EMAIL_FROM.value:
        address = parseaddr(value)[1]
        found = [f"arn:aws:ses:{REGION}:{ACCOUNT}:identity/{i}" for i in (address, address.rpartition("@")[2])]
        configuration = running.get(Settings.EMAIL_CONFIGURATION_SET.value)
        return found + ([f"arn:aws:ses:{REGION}:{ACCOUNT}:configuration-set/{configuration}"] if configuration else [])
    return []


def _complete(secret_arn: str) -> str:
    """A secret's full ARN: one imported by name (`from_secret_name_v2`) is named by a partial ARN, while AWS judges a
    call on the full one, which ends in Secrets Manager's six random characters (`-??????` in CDK's grants). As
    AWS warns, a name that itself ends in a hyphen and six letters or digits reads as complete."""
    return secret_arn if re.search(r"-[A-Za-z0-9]{6}$", secret_arn) else f"{secret_arn}-XXXXXX"
