"""`agent-wait push keys`: the operator's VAPID key pair, made and stored in Secrets Manager (the emulator here), in the
form the push channel reads; an existing secret is left alone unless --rotate."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_wait.channels.push import VapidKeys
from agent_wait.cli import main


def test_push_keys_stores_a_pair_the_channel_reads_and_prints_only_the_public_key(
    moto_server: str, aws_client: Any, unique: str, capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"agent-wait/push-keys-{unique}"
    # WHEN the operator makes the keys
    assert main(["push", "keys", "--secret", name, "--region", "us-east-1", "--endpoint-url", moto_server]) == 0
    # THEN the secret holds a pair the push channel reads, and only its public key is printed
    text = aws_client("secretsmanager").get_secret_value(SecretId=name)["SecretString"]
    keys = VapidKeys.parse(text, variable="AGENT_WAIT_PUSH_KEYS_ARN")
    printed = capsys.readouterr().out
    assert keys.public_key in printed
    assert "stored the push keys in arn:aws:secretsmanager:" in printed
    assert keys.private_key not in printed
    # AND running it again changes nothing and says how to rotate; --rotate puts a new pair in
    assert main(["push", "keys", "--secret", name, "--region", "us-east-1", "--endpoint-url", moto_server]) == 1
    assert "exists already: it is left as it is. Pass --rotate" in capsys.readouterr().err
    assert aws_client("secretsmanager").get_secret_value(SecretId=name)["SecretString"] == text
    rotate = ["push", "keys", "--secret", name, "--rotate", "--region", "us-east-1", "--endpoint-url", moto_server]
    assert main(rotate) == 0
    rotated = json.loads(aws_client("secretsmanager").get_secret_value(SecretId=name)["SecretString"])
    assert rotated["public_key"] != keys.public_key
