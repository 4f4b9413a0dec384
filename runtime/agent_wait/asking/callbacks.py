"""Questions that an AWS Lambda durable function's callback resumes: how their row says so, and what completes it.

`agent_wait.durable.ask` asks from inside a durable handler and waits with `context.wait_for_callback`. Its question
is decided like every other (the one desk, any door); the only difference is how the decision reaches the waiting
code: the router completes the callback (`SendDurableExecutionCallbackSuccess`, through a `CallbackCompleter`)
instead of resuming a graph. The row says which, in its envelope's `source`:

    {"resume": "durable_callback", "callback_id": "<the callback id Lambda gave the submitter>",
     "execution": "<the durable execution's ARN>"}

The execution's ARN lets the router recognise a completion it made before it died (`CallbackCompleter.succeed`);
a row from before it was recorded has none, and such a second completion stays refused.

The question id is derived from the callback id (`callback_question_id`: sha256, hex), never the id itself: a
callback id is up to 1,024 characters of base64 (`+`, `/`, `=`), which a URL path, a signed link or a Slack button
cannot carry as it is, and the same callback id always gives the same question id, so a submitter that runs again
records the same question. Standard library only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from agent_wait.asking.adapter import RunOutcome
from agent_wait.contract.envelope import Question
from agent_wait.errors import ConfigurationError

__all__ = (
    "CALLBACK_RESUME",
    "DURABLE_ONLY",
    "CallbackCompleter",
    "CallbacksOnly",
    "callback_execution_of",
    "callback_id_of",
    "callback_question_id",
    "callback_source",
)

CALLBACK_RESUME = "durable_callback"
"""`source["resume"]` of a question a durable function's callback resumes."""


def callback_question_id(callback_id: str) -> str:
    """The question id of the question waiting on `callback_id`: sha256 over `durable-callback|<id>`, in hex."""
    return hashlib.sha256(f"durable-callback|{callback_id}".encode()).hexdigest()


def callback_source(callback_id: str, *, execution: str | None = None) -> dict[str, str]:
    """The envelope `source` of a question that `callback_id`'s completion resumes, in the durable execution
    `execution` (its ARN) when given."""
    source = {"resume": CALLBACK_RESUME, "callback_id": callback_id}
    if execution:
        source["execution"] = execution
    return source


def callback_id_of(source: Mapping[str, Any] | None) -> str | None:
    """The callback id an envelope's `source` names, or None when a graph (or another host) resumes the question."""
    if source is None or source.get("resume") != CALLBACK_RESUME:
        return None
    callback_id = source.get("callback_id")
    return callback_id if isinstance(callback_id, str) and callback_id else None


def callback_execution_of(source: Mapping[str, Any] | None) -> str | None:
    """The durable execution's ARN a callback question's `source` names, or None (not a callback's, or recorded
    before the ARN was)."""
    if source is None or callback_id_of(source) is None:
        return None
    execution = source.get("execution")
    return execution if isinstance(execution, str) and execution else None


@runtime_checkable
class CallbackCompleter(Protocol):
    """Completes a durable function's callback with a decided answer (`agent_wait.aws.callbacks.LambdaCallbacks`)."""

    def succeed(self, callback_id: str, result: str, *, execution: str | None = None) -> None:
        """Complete `callback_id` with `result` (JSON text): the waiting `wait_for_callback` returns it.

        A callback completed with this very `result` already counts as completed and raises nothing: the router may
        have died after the service accepted it, before recording so, and the answer is then delivered again.
        `execution` is the durable execution's ARN when the question's row knows it (what tells a callback completed
        so from one that timed out or was completed otherwise); None: a completion the service refuses is refused.

        Raises:
            CallbackRefusedError: the service refused: the callback timed out, was completed otherwise (or, without
                `execution`, at all), or is unknown.
            CallbackUnavailableError: it failed for now (throttled, a fault on the service's side, unreachable).
        """
        ...


class CallbacksOnly:
    """The agent adapter of a router that serves durable functions only: it runs no agent.

    Its questions are all resumed by their callbacks (`Router(callbacks=...)`), so nothing is ever parked here; a
    start message is refused with a `ConfigurationError` (a durable execution is started by invoking its function).
    The deployed router runs it with `AGENT_WAIT_GRAPH=agent_wait.asking.callbacks:DURABLE_ONLY`.
    """

    framework = "durable"

    def agent_wait_adapter(self, **_: Any) -> CallbacksOnly:
        """What the host's wiring asks of a hosted target: this adapter itself (it keeps no threads)."""
        return self

    def start(self, thread_id: str, value: Any) -> RunOutcome:
        raise ConfigurationError(
            [
                f"thread {thread_id}: this router serves durable functions only and runs no agent; start a durable "
                "execution by invoking its function (or give the router an agent to run)"
            ]
        )

    def resume(self, thread_id: str, question_id: str, answer: Any) -> RunOutcome:
        return RunOutcome(None)  # never called: a durable question's decision completes its callback

    def pending(self, thread_id: str) -> list[Question]:
        return []

    def progress(self, thread_id: str) -> str | None:
        return None

    def unfinished(self, thread_id: str) -> bool:
        return False

    def continue_run(self, thread_id: str) -> RunOutcome:
        return RunOutcome(None)


DURABLE_ONLY = CallbacksOnly()
"""`AGENT_WAIT_GRAPH=agent_wait.asking.callbacks:DURABLE_ONLY`: a router that serves durable functions only."""
