"""`agent-wait push keys`: make a VAPID key pair for web push and store it in Secrets Manager, as
`AgentWait(push=PushProps(keys_secret=...))` reads it (docs/phone.md).

    agent-wait push keys --secret agent-wait/push-keys            create the secret with a new pair (once)
    agent-wait push keys --secret agent-wait/push-keys --rotate   a new pair in the existing secret

The secret's text is `{"public_key", "private_key"}` (`agent_wait.channels.push.keys.VapidKeys`). It prints the
secret's ARN and the public key, never the private key. A secret that exists already is left as it is unless
`--rotate`: a new pair ends every subscription made with the old public key (browsers subscribe again on their next
sign-in, as the inbox re-sends its subscription, which the push services then refuse until it is renewed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_wait.cli._target import CliError

__all__ = ("StoredKeys", "store_push_keys")


@dataclass(frozen=True, slots=True)
class StoredKeys:
    """What `store_push_keys` did."""

    arn: str
    public_key: str
    created: bool
    """True: the secret was made now; False: a new pair was put in the existing secret (`rotate`)."""


def store_push_keys(secrets: Any, name: str, *, rotate: bool = False) -> StoredKeys:
    """Make a new pair and store it as the secret `name`: created, or (with `rotate`) put in the existing one.

    Raises:
        CliError: the secret exists and `rotate` was not asked for (nothing changed), or AWS refused (its code).
    """
    from agent_wait.aws.errors import AWS_ERRORS, error_code
    from agent_wait.channels.push.keys import VapidKeys

    keys = VapidKeys.generate()
    try:
        if rotate:
            arn = secrets.put_secret_value(SecretId=name, SecretString=keys.to_secret())["ARN"]
            return StoredKeys(arn, keys.public_key, created=False)
        made = secrets.create_secret(
            Name=name,
            SecretString=keys.to_secret(),
            Description="agent-wait web push: the VAPID key pair (agent-wait push keys)",
        )
        return StoredKeys(made["ARN"], keys.public_key, created=True)
    except AWS_ERRORS as exc:
        code = error_code(exc)
        if code == "ResourceExistsException":
            raise CliError(
                f"the secret {name!r} exists already: it is left as it is. Pass --rotate to put a new key pair in it "
                "(every device then subscribes again)"
            ) from None
        raise CliError(f"Secrets Manager refused to store the push keys in {name!r}: {code}") from None
