"""`agent-wait dev`: the local stack in the foreground, printing each envelope as it is announced.

Beside the emulator it serves the answer API on 127.0.0.1 with a local JWT issuer, and prints a
ready-to-paste `curl` line with a token from the dev sign-in.
"""

from __future__ import annotations

import json
import signal
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from agent_wait.cli._api import sign_in
from agent_wait.cli._progress import progress
from agent_wait.cli._target import LOCAL_STATE, CliError, Target
from agent_wait.errors import ConfigurationError

__all__ = ("DEV_GROUPS", "DEV_USER", "Observer", "run_dev")

DEV_USER = "dev@example.com"
"""Who the printed curl line signs in as."""
DEV_GROUPS = ("finance",)
"""Their groups: finance answers the refund example's questions."""


class Observer:
    """A queue subscribed to the stack's topic, so the terminal sees what subscribers see."""

    def __init__(self, local: Any) -> None:
        self.local = local
        self.queue_url: str | None = None
        topic = local.environment.get("AGENT_WAIT_TOPIC_ARN")
        if not topic:
            return
        sqs, sns = local.client("sqs"), local.client("sns")
        fifo = topic.endswith(".fifo")
        name = "agent-wait-dev-observer" + (".fifo" if fifo else "")
        attributes = {"FifoQueue": "true"} if fifo else {}
        self.queue_url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})

    def drain(self) -> list[dict[str, Any]]:
        """Envelopes announced since the last call, oldest first."""
        if self.queue_url is None:
            return []
        sqs, seen = self.local.client("sqs"), []
        while True:
            messages = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not messages:
                return seen
            for message in messages:
                seen.append(json.loads(message["Body"]))
                sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])


def _traceback(outcome: Any) -> str:
    """The agent's traceback, shown on this terminal only: on AWS it is logged at DEBUG, never above."""
    lines = traceback.format_exception(outcome.error)
    return (
        f"agent-wait dev: the agent raised on thread {outcome.thread_id}; after fixing it run: "
        f"agent-wait retry {outcome.thread_id}\n" + "".join(lines)
    )


def describe(envelope: Mapping[str, Any]) -> str:
    """One line per envelope: ids, actions, deadline and tags, never the question itself."""
    tags = ",".join(f"{k}={v}" for k, v in (envelope.get("tags") or {}).items())
    return (
        f"{envelope.get('type', '?'):15} thread={envelope.get('thread_id')} question={envelope.get('question_id')}"
        f" actions={'/'.join(envelope.get('allowed_actions') or [])} expires={envelope.get('expires_at')}"
        + (f" tags={tags}" if tags else "")
    )


def run_dev(
    template_factory: Callable[[], Mapping[str, Any]],
    *,
    out: TextIO,
    sweep_every: float = 60.0,
    stop: threading.Event | None = None,
    api_port: int = 0,
) -> int:
    """Run the local stack and its answer API until Ctrl-C (or `stop` is set); returns the exit status.

    Args:
        template_factory: returns the synthesized template of an `AgentWait` stack.
        out: where the URLs, the curl line and one line per envelope go.
        sweep_every: seconds between sweeps.
        stop: set it to stop (Ctrl-C sets it too).
        api_port: the answer API's port on 127.0.0.1; 0 picks a free one.
    """
    from agent_wait.local.stack import EmulatedStack

    stop = stop or threading.Event()
    with progress("Synthesizing the stack template"):
        template = template_factory()
    with progress("Starting the embedded AWS emulator and deploying the template"):
        local = EmulatedStack(template, api_port=api_port)
        try:
            local.start()  # loads the agent too: one that cannot run stops here, before anything is served
        except ConfigurationError as exc:
            raise CliError(f"the stack cannot start: {exc}") from None
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if previous is not None:
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        observer = Observer(local)
        target = Target(
            queue_url=local.queue_url,
            table=local.table,
            endpoint_url=local.endpoint_url,
            region="us-east-1",
            source="dev",
            api_url=local.api_url,
            issuer=local.issuer.url,
            dead_letter_url=local.environment.get("AGENT_WAIT_DLQ_URL"),
        )
        target.save()
        token = sign_in(target, DEV_USER, DEV_GROUPS)
        out.write(
            f"agent-wait dev: emulator at {local.endpoint_url}\n"
            f"  entry queue  {local.queue_url}\n  ledger table {local.table}\n"
            f"  answer API   {local.api_url}  (JWT issuer {local.issuer.url}, audience {local.issuer.audience})\n"
            f"  inbox        {local.api_url}/inbox  (sign in as anyone, in any groups)\n"
            f"Try the API as {DEV_USER} in {', '.join(DEV_GROUPS)} (the token is valid for an hour):\n"
            f"  curl -s -H 'Authorization: Bearer {token}' {local.api_url}/questions\n"
            "In another terminal: agent-wait start THREAD --input JSON; agent-wait questions;\n"
            "  export AGENT_WAIT_TOKEN=$(agent-wait token --user alice@example.com --groups finance); "
            "agent-wait answer QUESTION approve\n"
            "Ctrl-C stops everything.\n"
        )
        out.flush()
        last_sweep = time.monotonic()
        while not stop.is_set():
            try:
                for outcome in local.pump(wait_seconds=1).outcomes:
                    if getattr(outcome, "error", None) is not None:
                        out.write(_traceback(outcome))
                if time.monotonic() - last_sweep >= sweep_every:
                    last_sweep = time.monotonic()
                    local.sweep()
                for envelope in observer.drain():
                    out.write(describe(envelope) + "\n")
                    out.flush()
            except Exception as exc:  # dev outlives any one turn: SQS redelivers what was not handled
                out.write(
                    f"agent-wait dev: a turn failed ({type(exc).__name__}: {exc}); still serving, and the entry "
                    "queue delivers its messages again\n"
                )
                out.flush()
                stop.wait(1)
        out.write("agent-wait dev: stopping\n")
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        local.stop()
        LOCAL_STATE.unlink(missing_ok=True)
