"""Where the CLI's commands go: the local stack `agent-wait dev` runs, or a deployed stack's outputs."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agent_wait.schema import Settings

__all__ = ("LOCAL_STATE", "CliError", "Target", "resolve_target")

LOCAL_STATE = Path(".agent-wait") / "local.json"
"""Written by `agent-wait dev` while it runs, so other terminals can reach its emulator."""


class CliError(Exception):
    """A one-line problem for the person at the terminal; the message says what to do."""


@dataclass(frozen=True)
class Target:
    queue_url: str
    table: str
    endpoint_url: str | None = None
    region: str | None = None
    source: str = "environment"

    def client(self, service: str) -> Any:
        import boto3

        return boto3.client(service, region_name=self.region, endpoint_url=self.endpoint_url)

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
        if queue and table:
            return Target(
                queue_url=queue, table=table, region=queue.split(".")[1] if "sqs." in queue else None, source=str(path)
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
        return Target(queue_url=queue, table=table, endpoint_url=env.get("AWS_ENDPOINT_URL"))
    if LOCAL_STATE.exists():
        state = json.loads(LOCAL_STATE.read_text())
        return Target(**{**state, "source": "agent-wait dev"})
    raise CliError(
        "no stack to talk to: run `agent-wait dev` in another terminal, pass --outputs cdk-outputs.json "
        f"(from `cdk deploy --outputs-file`), or set {Settings.QUEUE_URL.value} and {Settings.TABLE.value}"
    )
