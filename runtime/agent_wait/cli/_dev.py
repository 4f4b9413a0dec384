"""`agent-wait dev`: the local stack in the foreground, printing each envelope as it is announced."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from agent_wait.cli._progress import progress
from agent_wait.cli._target import LOCAL_STATE, Target

__all__ = ("Observer", "run_dev")


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
) -> int:
    """Run the local stack until Ctrl-C (or `stop` is set); returns the exit status."""
    from agent_wait.host.local import LocalStack

    stop = stop or threading.Event()
    with progress("Synthesizing the stack template"):
        template = template_factory()
    with progress("Starting the embedded AWS emulator and deploying the template"):
        local = LocalStack(template)
        local.start()
    previous = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if previous is not None:
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        observer = Observer(local)
        Target(
            queue_url=local.queue_url,
            table=local.table,
            endpoint_url=local.endpoint_url,
            region="us-east-1",
            source="dev",
        ).save()
        out.write(
            f"agent-wait dev: emulator at {local.endpoint_url}\n"
            f"  entry queue  {local.queue_url}\n  ledger table {local.table}\n"
            "In another terminal: agent-wait start THREAD --input JSON; agent-wait questions; "
            "agent-wait answer QUESTION approve\nCtrl-C stops everything.\n"
        )
        out.flush()
        last_sweep = time.monotonic()
        while not stop.is_set():
            local.pump(wait_seconds=1)
            if time.monotonic() - last_sweep >= sweep_every:
                local.sweep()
                last_sweep = time.monotonic()
            for envelope in observer.drain():
                out.write(describe(envelope) + "\n")
                out.flush()
        out.write("agent-wait dev: stopping\n")
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        local.stop()
        LOCAL_STATE.unlink(missing_ok=True)
