"""The answer-link keys: a Secrets Manager secret holding `{"active": "<key id>", "<key id>": "<key>", ...}`.

The active key signs each link; every key listed verifies one. Keys rotate by adding a key id and pointing
`active` at it (docs/constructs.md, "Link keys and their rotation"), never by replacing the value.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, RemovalPolicy, Validations
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

__all__ = ("LINK_KEYS_TEMPLATE", "link_keys_secret")

LINK_KEYS_TEMPLATE = '{"active":"k1"}'
"""The generated secret's JSON before its key: Secrets Manager adds `k1`, the generated key."""


def link_keys_secret(
    scope: Construct, *, encryption_key: kms.IKey | None, removal_policy: RemovalPolicy
) -> secretsmanager.Secret:
    """The link keys secret `AnswerApi` creates with `links` when none is given (child "LinkKeys"): one generated
    48-character key, `k1`, active."""
    secret = secretsmanager.Secret(
        scope,
        "LinkKeys",
        description="agent-wait answer-link keys: {'active': key id, key id: key}; the active key signs",
        encryption_key=encryption_key,
        removal_policy=removal_policy,
        generate_secret_string=secretsmanager.SecretStringGenerator(
            secret_string_template=LINK_KEYS_TEMPLATE,
            generate_string_key="k1",
            password_length=48,
            exclude_punctuation=True,
        ),
    )
    Validations.of(secret).acknowledge(
        Acknowledgment(
            id="AwsSolutions-SMG4",
            reason=(
                "Link keys rotate by adding a key id and pointing 'active' at it: the new key signs while "
                "every listed key still verifies links already sent; a Secrets Manager rotation Lambda "
                "replacing the value would break every link in flight."
            ),
        )
    )
    return secret
