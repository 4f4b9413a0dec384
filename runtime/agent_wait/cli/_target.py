"""Where the CLI's commands go: the local stack `agent-wait dev` runs, or a deployed stack's outputs."""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from agent_wait.schema import Settings

__all__ = ("LOCAL_STATE", "CliError", "Target", "local_target", "resolve_target")

LOCAL_REGION = "us-east-1"
"""The region of the local emulator's resources."""
LOCAL_KEY = "local"
"""What signs requests to the local emulator when no AWS credentials are configured (it checks none)."""
LOCAL_STATE = Path(".agent-wait") / "local.json"
"""Written by `agent-wait dev` while it runs, so other terminals can reach its emulator."""


class CliError(Exception):
    """A one-line problem for the person at the terminal; the message says what to do."""


@dataclass(frozen=True)
class Target:
    """A stack the CLI talks to: its entry queue and ledger, and its answer API when one is known."""

    queue_url: str
    """The entry FIFO queue (starts, and answers when no API is known)."""
    table: str
    """The question table."""
    endpoint_url: str | None = None
    """The AWS endpoint (the local emulator's), or None for AWS itself."""
    region: str | None = None
    """The stack's region."""
    source: str = "environment"
    """Where this target came from, named in error messages."""
    api_url: str | None = None
    """The answer API's base URL; `agent-wait answer` goes there when set."""
    issuer: str | None = None
    """The local JWT issuer of `agent-wait dev` (its `/dev/token` signs in); None for a deployed stack."""
    dead_letter_url: str | None = None
    """The entry queue's dead-letter queue, for `agent-wait dead-letters`."""

    def client(self, service: str) -> Any:
        """A boto3 client for this stack. On the local emulator no AWS credentials or region are needed: it
        checks no signature, so when none are configured the client signs with placeholder keys."""
        import boto3

        if not self.is_local:
            return boto3.client(service, region_name=self.region, endpoint_url=self.endpoint_url)
        session = boto3.Session(region_name=self.region or LOCAL_REGION)
        if session.get_credentials() is None:
            session = boto3.Session(
                aws_access_key_id=LOCAL_KEY, aws_secret_access_key=LOCAL_KEY, region_name=self.region or LOCAL_REGION
            )
        return session.client(service, endpoint_url=self.endpoint_url)

    @property
    def is_local(self) -> bool:
        """Whether this is an emulator on this machine (the endpoint is a loopback address)."""
        host = urllib.parse.urlsplit(self.endpoint_url or "").hostname or ""
        return host == "localhost" or host.startswith("127.") or host == "::1"

    def save(self, path: Path = LOCAL_STATE) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=2))


def _from_outputs(path: Path) -> Target:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise CliError(f"{path} does not exist; create it with: cdk deploy --outputs-file {path}") from None
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{path} is not JSON ({exc.msg}); it should be the file `cdk deploy --outputs-file` wrote"
        ) from None
    stacks = [value for value in data.values() if isinstance(value, Mapping)] if isinstance(data, Mapping) else []
    for outputs in stacks:
        queue = next((v for k, v in outputs.items() if k.startswith("AgentWait") and "EntryQueueUrl" in k), None)
        table = next((v for k, v in outputs.items() if "QuestionTableName" in k), None)
        api = next((v for k, v in outputs.items() if k.startswith("AgentWait") and "ApiUrl" in k), None)
        dlq = next((v for k, v in outputs.items() if k.startswith("AgentWait") and "DeadLetterQueueUrl" in k), None)
        if queue and table:
            return Target(
                queue_url=queue,
                table=table,
                region=queue.split(".")[1] if "sqs." in queue else None,
                source=str(path),
                api_url=str(api).rstrip("/") if api else None,
                dead_letter_url=dlq,
            )
    raise CliError(
        f"{path} has no AgentWait outputs (EntryQueueUrl, QuestionTableName); is it from an AgentWait stack?"
    )


def resolve_target(outputs: str | None = None, environ: Mapping[str, str] | None = None) -> Target:
    """`--outputs FILE`, else AGENT_WAIT_QUEUE_URL + AGENT_WAIT_TABLE, else the running `agent-wait dev`."""
    env = os.environ if environ is None else environ
    if outputs:
        return _from_outputs(Path(outputs))
    queue, table = env.get(Settings.QUEUE_URL.value), env.get(Settings.TABLE.value)
    if queue and table:
        return Target(
            queue_url=queue,
            table=table,
            endpoint_url=env.get("AWS_ENDPOINT_URL"),
            dead_letter_url=env.get(Settings.DLQ_URL.value),
        )
    if LOCAL_STATE.exists():
        return local_target()
    raise CliError(
        "no stack to talk to: run `agent-wait dev` in another terminal, pass --outputs cdk-outputs.json "
        f"(from `cdk deploy --outputs-file`), or set {Settings.QUEUE_URL.value} and {Settings.TABLE.value}"
    )


def local_target(path: Path = LOCAL_STATE) -> Target:
    """The running `agent-wait dev`, from the state file it writes in the directory it runs in.

    Raises:
        CliError: no `agent-wait dev` is running from this directory.
    """
    try:
        state = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        raise CliError(
            f"no `agent-wait dev` is running from this directory ({path} is missing or unreadable); start it in "
            "another terminal, from this directory"
        ) from None
    known = {f.name for f in fields(Target)}
    return Target(**{**{k: v for k, v in state.items() if k in known}, "source": "agent-wait dev"})
