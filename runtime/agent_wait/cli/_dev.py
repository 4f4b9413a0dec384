"""`agent-wait dev`: the local stack in the foreground, printing each envelope as it is announced.

Beside the emulator it serves the answer API on 127.0.0.1 with a local JWT issuer, and prints a
ready-to-paste `curl` line with a token from the dev sign-in, the keys the graph's input takes, and under each
new question its signed links and the command that answers it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import signal
import sys
import threading
import time
import traceback
import typing
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from agent_wait.cli._api import sign_in, token_command
from agent_wait.cli._progress import progress
from agent_wait.cli._target import DEV_USER, LOCAL_STATE, CliError, Target
from agent_wait.errors import ConfigurationError, MissingExtraError

__all__ = ("DEV_USER", "Observer", "answer_hint", "input_hint", "run_dev")


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


_RECORD_KEYS = ("thread_id", "question_id", "message_id", "outcome", "reason", "error")
"""The ids and kinds a handler's log record carries as keys (never question content), shown on its readable line."""


class _ReadableLines(logging.Handler):
    """One line per warning or error the handlers log, for a person: its message and its ids, not a JSON record."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(logging.WARNING)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        try:
            keys = " ".join(f"{key}={getattr(record, key)}" for key in _RECORD_KEYS if getattr(record, key, None))
            self.out.write(f"agent-wait dev: {record.levelname.lower()}: {record.getMessage()}  {keys}".rstrip() + "\n")
            self.out.flush()
        except Exception:
            self.handleError(record)


@contextlib.contextmanager
def _handler_logs(out: TextIO, *, verbose: bool) -> Iterator[None]:
    """Where the Lambda handlers' Powertools log records go while `dev` serves (enter it once the stack started:
    the handlers' loggers are named for the stack's `POWERTOOLS_SERVICE_NAME`).

    Verbose: every record at the handlers' level (INFO unless `POWERTOOLS_LOG_LEVEL` says otherwise), as the JSON
    CloudWatch would get, on `out`. Otherwise only warnings and errors, each one readable line, so the `wait.*`
    lines are not buried under a `message handled` per message and a `sweep done` per minute.
    """
    from agent_wait.host import api, router, sweep

    loggers = [logging.getLogger(name) for name in sorted({module.logger.name for module in (router, sweep, api)})]
    saved = [(handler, handler.level, getattr(handler, "stream", None)) for lg in loggers for handler in lg.handlers]
    readable = _ReadableLines(out)
    with warnings.catch_warnings():
        if verbose:
            for handler, _, stream in saved:
                if stream is not None:
                    handler.setStream(out)  # type: ignore[attr-defined]
        else:
            for handler, _, _ in saved:
                handler.setLevel(logging.CRITICAL + 1)
            for lg in loggers:
                lg.addHandler(readable)
            # Powertools warns on each invocation that published no metric: locally none is ever published.
            warnings.filterwarnings("ignore", message="No application metrics to publish")
        try:
            yield
        finally:
            for lg in loggers:
                lg.removeHandler(readable)
            for handler, level, stream in saved:
                handler.setLevel(level)
                if stream is not None:
                    handler.setStream(stream)  # type: ignore[attr-defined]


def _links(target: Target, envelope: Mapping[str, Any]) -> str:
    """A new question's signed links, one line each, to open in a browser (they answer it: keep them local)."""
    if envelope.get("type") != "wait.created":
        return ""
    from agent_wait.cli._links import envelope_links, no_links_reason

    try:
        links = envelope_links(target, envelope)
    except Exception as exc:  # the envelope line is printed anyway; a link is a convenience
        return f"  no signed link: {type(exc).__name__}: {exc}\n"
    lines = "".join(f"  link {action:8} {url}\n" for action, url in links.items())
    if not links:
        lines = f"  no signed link: {no_links_reason(envelope)}\n"
    return lines + f"  answer   {answer_hint(envelope)}\n"


def answer_hint(envelope: Mapping[str, Any]) -> str:
    """The command that answers this question, with its own first action (and a sign-in when it needs a group)."""
    question, actions = envelope.get("question_id"), list(envelope.get("allowed_actions") or ())
    command = f"agent-wait answer {question} {actions[0] if actions else 'ACTION'}"
    if len(actions) > 1:
        command += f"   (its actions: {', '.join(actions)})"
    groups = list(((envelope.get("rules") or {}).get("answerers") or {}).get("groups") or ())
    if groups:  # one of them is enough to answer
        command = f"export AGENT_WAIT_TOKEN=$({token_command(groups[:1])}); {command}"
    return command


def _agent() -> Any:
    """What the router runs (its adapter's graph, for a LangGraph agent), loaded when the stack started."""
    from agent_wait.host import router

    adapter = router._router().adapter
    return getattr(adapter, "graph", adapter)


def input_hint(agent: Any) -> str:
    """`   (this graph's input keys: ...)`: the keys a start's `--input` object takes, read from a LangGraph graph's
    input schema (a TypedDict, a Pydantic model or a dataclass); "" for anything else."""
    schema = getattr(getattr(agent, "builder", None), "input_schema", None)
    if not isinstance(schema, type):
        return ""
    required, optional = _input_keys(schema)
    if not (required or optional):
        return ""
    parts = ([", ".join(required)] if required else []) + ([f"optional {', '.join(optional)}"] if optional else [])
    return f"   (this graph's input keys: {'; '.join(parts)})"


def _input_keys(schema: type) -> tuple[list[str], list[str]]:
    """(required, optional) keys of an input schema, in declaration order."""
    fields = getattr(schema, "model_fields", None)  # a Pydantic model
    if isinstance(fields, Mapping):
        names = list(fields)
        return [n for n in names if fields[n].is_required()], [n for n in names if not fields[n].is_required()]
    try:
        hints = typing.get_type_hints(schema, include_extras=True)
    except Exception:  # an annotation that does not resolve: the names, with nothing said about which are required
        return [], list(getattr(schema, "__annotations__", {}))
    if typing.is_typeddict(schema):
        total = getattr(schema, "__total__", True)

        def needed(name: str) -> bool:
            origin = typing.get_origin(hints[name])
            return origin is typing.Required or (total and origin is not typing.NotRequired)

        return [n for n in hints if needed(n)], [n for n in hints if not needed(n)]
    if dataclasses.is_dataclass(schema):
        missing = dataclasses.MISSING
        without = {f.name for f in dataclasses.fields(schema) if f.default is missing and f.default_factory is missing}
        return [n for n in hints if n in without], [n for n in hints if n not in without]
    return list(hints), []


def describe(envelope: Mapping[str, Any]) -> str:
    """One line per envelope: ids, actions, deadline and tags, never the question itself. A question with no
    deadline says `expires=never`, as `agent-wait questions` and the ledger do."""
    tags = ",".join(f"{k}={v}" for k, v in (envelope.get("tags") or {}).items())
    return (
        f"{envelope.get('type', '?'):15} thread={envelope.get('thread_id')} question={envelope.get('question_id')}"
        f" actions={'/'.join(envelope.get('allowed_actions') or [])} expires={envelope.get('expires_at') or 'never'}"
        + (f" tags={tags}" if tags else "")
    )


def _untold(outcome: Any) -> str:
    """A line for what no envelope tells: a start the agent ran to its end without asking, an answer the router
    refused (the queue answers its sender nothing) and a message it dead-lettered; else nothing."""
    from agent_wait.engine.outcomes import OutcomeKind, RefusalReason

    ids = f"thread={outcome.thread_id}" + (f" question={outcome.question_id}" if outcome.question_id else "")
    if outcome.kind is OutcomeKind.REFUSED and outcome.reason is not RefusalReason.DUPLICATE:
        return f"{'refused':15} {ids} reason={outcome.reason}  {outcome.detail}\n"
    if outcome.kind is OutcomeKind.DEAD_LETTERED and outcome.error is None:  # an agent's raise has its traceback
        return f"{'dead-lettered':15} {ids} reason={outcome.reason}  {outcome.detail} (agent-wait dead-letters list)\n"
    if outcome.kind is not OutcomeKind.STARTED or outcome.asked or outcome.error is not None:
        return ""
    return f"{'finished':15} thread={outcome.thread_id}  (the agent ran to the end without asking)\n"


def run_dev(
    template_factory: Callable[[], Mapping[str, Any]],
    *,
    out: TextIO,
    sweep_every: float = 60.0,
    stop: threading.Event | None = None,
    api_port: int = 0,
    verbose: bool = False,
    state_dir: Path | None = None,
    fresh: bool = False,
) -> int:
    """Run the local stack and its answer API until Ctrl-C (or `stop` is set); returns the exit status.

    Args:
        template_factory: returns the synthesized template of an `AgentWait` stack.
        out: where the URLs, the curl line and one line per envelope go.
        sweep_every: seconds between sweeps.
        stop: set it to stop (Ctrl-C sets it too).
        api_port: the answer API's port on 127.0.0.1; 0 picks a free one.
        verbose: also print the handlers' Powertools log records (JSON, INFO and up), each failed turn's traceback
            and that of a template that fails to synthesize; otherwise only their warnings and errors, one readable
            line each, and the error alone.
        state_dir: where the stack's state is kept across restarts (`agent_wait.local.state`); None: memory only.
        fresh: delete the state saved in `state_dir` first, and start empty.

    Raises:
        CliError: the template cannot be synthesized, or the stack cannot start (a setting is wrong, its agent cannot
            be loaded, or its saved state cannot be read), or its state could not be saved as it stopped.
    """
    from agent_wait.local.stack import EmulatedStack
    from agent_wait.local.state import StateFileError, forget_state

    stop = stop or threading.Event()
    if fresh and state_dir is not None:
        forget_state(state_dir)
    with progress("Synthesizing the stack template"):
        template = _synthesized(template_factory, verbose=verbose)
    with progress("Starting the embedded AWS emulator and deploying the template"):
        local = EmulatedStack(template, api_port=api_port, state_dir=state_dir)
        try:
            local.start()  # loads the agent too: one that cannot run stops here, before anything is served
        except (ConfigurationError, StateFileError) as exc:
            raise CliError(f"the stack cannot start: {exc}") from None
    # Ctrl-C and a `kill` stop the loop, so the stack stops cleanly and saves its state.
    handled = (signal.SIGINT, signal.SIGTERM) if threading.current_thread() is threading.main_thread() else ()
    previous = {number: signal.getsignal(number) for number in handled}
    for number in previous:
        signal.signal(number, lambda *_: stop.set())
    try:
        with _handler_logs(out, verbose=verbose):
            _serve(local, out, stop=stop, sweep_every=sweep_every, verbose=verbose)
        with contextlib.suppress(BrokenPipeError):  # Ctrl-C on `agent-wait dev | tee log` ends the reader first
            out.write("agent-wait dev: stopping\n")
            out.flush()
        return 0
    finally:
        for number, handler in previous.items():
            if handler is not None:
                signal.signal(number, handler)
        LOCAL_STATE.unlink(missing_ok=True)
        try:
            local.stop()
        except StateFileError as exc:
            raise CliError(str(exc)) from None


def _synthesized(template_factory: Callable[[], Mapping[str, Any]], *, verbose: bool) -> Mapping[str, Any]:
    """The template, or a `CliError` that says what the app got wrong (invalid props are the construct's own list,
    one line each); the traceback, mostly jsii's and the CDK's frames, goes to stderr only with `verbose`.

    Raises:
        CliError: the app raised while it synthesized.
    """
    try:
        return template_factory()
    except (CliError, MissingExtraError):
        raise
    except Exception as exc:
        if verbose:
            traceback.print_exception(exc, file=sys.stderr)
        hint = "" if verbose else "; --verbose shows the traceback"
        raise CliError(f"the stack's template cannot be synthesized ({type(exc).__name__}{hint}): {exc}") from None


def _mcp_lines(local: Any) -> str:
    """Where the MCP server is, when the stack serves one (`AgentWait(mcp=...)`, as the refund example does)."""
    routes = {
        resource.get("Properties", {}).get("RouteKey")
        for resource in local.template.get("Resources", {}).values()
        if resource.get("Type") == "AWS::ApiGatewayV2::Route"
    }
    if "POST /mcp" not in routes or "mcp" in local.features_off:
        return ""
    return (
        f"  MCP server   {local.api_url}/mcp  (ask_person, answered as a task; a bearer token as above)\n"
        f"               {local.api_url}/mcp/iam  (SigV4 with the emulator's keys: local / local)\n"
    )


def _serve(local: Any, out: TextIO, *, stop: threading.Event, sweep_every: float, verbose: bool) -> None:
    """Say where everything is, then pump the entry queue, sweep and print envelopes until `stop` is set (or nobody
    reads `out` any more)."""
    observer = Observer(local)
    target = Target.of_local_stack(local)
    target.save()
    target.register()  # so the CLI finds this dev from any folder, when none runs there
    token = sign_in(target, DEV_USER, ())
    try:
        out.write(
            f"agent-wait dev: emulator at {local.endpoint_url}\n"
            f"  entry queue  {local.queue_url}\n  ledger table {local.table}\n"
            f"  answer API   {local.api_url}  (JWT issuer {local.issuer.url}, audience {local.issuer.audience})\n"
            f"  inbox        {local.api_url}/inbox  (sign in as anyone, in any groups)\n"
            f"               {local.passkey_url}  (the same, where passkeys work: WebAuthn needs a host name)\n"
            f"  Slack        {local.api_url}/dev/slack  (each question's Slack message as it would look)\n"
            f"  Teams        {local.api_url}/dev/teams  (each Teams card the stack posted, as Teams draws it)\n"
            f"  Email        {local.api_url}/dev/email  (each email the stack sent through SES, as it was sent)\n"
            + (
                f"  Webhooks     {local.api_url}/dev/webhooks/received.json  (what {', '.join(local.webhooks_routed)} "
                "would have posted: their secrets hold no URL here)\n"
                if local.webhooks_routed
                else ""
            )
            + _mcp_lines(local)
            + "".join(f"  off here     {line}\n" for line in local.features_off.values())
            + (local.state.describe() if local.state is not None else "  state        in memory only\n")
            + f"Try the API as {DEV_USER} (the token is valid for an hour):\n"
            f"  curl -s -H 'Authorization: Bearer {token}' {local.api_url}/questions\n"
            f"In another terminal: agent-wait start THREAD --input JSON{input_hint(_agent())}\n"
            "  each question the agent asks is printed below, with its links and the command that answers it\n"
            "Ctrl-C stops everything.\n"
        )
        out.flush()
        last_sweep = time.monotonic()
        from agent_wait.local.schedules import stack_delivery

        delivery = stack_delivery(local)  # precise deadlines: moto never fires a schedule, so the loop does
        while not stop.is_set():
            try:
                for outcome in local.pump(wait_seconds=1).outcomes:
                    if getattr(outcome, "error", None) is not None:
                        out.write(_traceback(outcome))
                    out.write(_untold(outcome))
                if delivery is not None:
                    delivery.deliver_due()
                if time.monotonic() - last_sweep >= sweep_every:
                    last_sweep = time.monotonic()
                    local.sweep()
                    local.expire()  # what DynamoDB's TTL and S3's lifecycle rules would delete by now
                for envelope in observer.drain():
                    out.write(describe(envelope) + "\n" + _links(target, envelope))
                    out.flush()
            except BrokenPipeError:
                raise
            except Exception as exc:  # dev outlives any one turn: SQS redelivers what was not handled
                out.write(
                    f"agent-wait dev: a turn failed ({type(exc).__name__}: {exc}); still serving, and the entry "
                    "queue delivers its messages again\n"
                    + ("".join(traceback.format_exception(exc)) if verbose else "")
                )
                out.flush()
                stop.wait(1)
    except BrokenPipeError:  # nobody reads this terminal any more: stop as Ctrl-C would
        stop.set()
    finally:
        target.unregister()
