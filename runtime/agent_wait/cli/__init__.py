"""`agent-wait`: run the product locally, start agents, list and answer questions.

    agent-wait init [FOLDER] --name my_agent     write a small working project: a graph that asks, a CDK app, a test
    agent-wait dev                               the local stack and its answer API, printing each envelope as announced
    agent-wait dev --graph my_pkg.graph:build    the same around your own graph, on the default AgentWait stack
    agent-wait demo                              the refund-agent scenarios, narrated; non-zero on a wrong outcome
    agent-wait token --user U --groups G         a bearer token from the running `agent-wait dev`'s sign-in
    agent-wait link QUESTION ACTION              a signed link that answers QUESTION with ACTION on `agent-wait dev`
    agent-wait start THREAD --input JSON         send a start message (--start-id ID: sending it again starts once)
    agent-wait questions [--status open]         list questions from the ledger
    agent-wait questions show QUESTION           one question: what is asked, its policy, and its decision
    agent-wait answer QUESTION approve|reject    answer one: with a token (--token, $AGENT_WAIT_TOKEN) over the answer
                                                 API, which says who won; else on the entry queue (checked first);
                                                 --args JSON edits the call's arguments, --answer JSON sends any answer
    agent-wait extend QUESTION --by PT2H         move an open question's deadline later, over the answer API with a
                                                 token; its policy says who may and how far (--until TIME: to a time)
    agent-wait answer Q1 Q2 ... approve          answer several the same way, each decided on its own (over the API)
    agent-wait cancel QUESTION --reason TEXT     cancel one over the answer API: the agent gets the policy's on_cancel
    agent-wait failures                          list failed threads: what failed, where, with which error
    agent-wait dead-letters list                 the entry queue's dead letters, each with its reason (they stay)
    agent-wait dead-letters redrive [--reason R] move them back to the entry queue, in their thread's order
    agent-wait retry THREAD                      after fixing the agent, apply a failed thread's start or decision again
    agent-wait audit export --since 2026-03-01   every question asked or decided since then: who decided, through which
                                                 door, with which arguments (--until, --format jsonl|csv, --out FILE)
    agent-wait audit grants --since 2026-03-01   the standing grants in force since then, each with what it decided
    agent-wait grants list [--all]               the live standing grants (--all: revoked, expired, used up too)
    agent-wait grants show|revoke GRANT          one grant and what it decided; revoke it for every ask after this
    agent-wait push keys --secret NAME           make web push's VAPID key pair and store it in Secrets Manager

`start`, `questions`, `answer`, `extend`, `failures`, `retry`, `dead-letters`, `audit` and `grants` talk to the running
`agent-wait dev`, or to a deployed stack: `--stack NAME` (with `--region`, `--profile` as for the aws CLI) or `--outputs
cdk-outputs.json` (written by `cdk deploy --outputs-file cdk-outputs.json`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_wait.cli import _api, _questions
from agent_wait.cli._extend import run_extend
from agent_wait.cli._parser import DEFAULT_APP, REPO_APP, build_parser
from agent_wait.cli._target import LOCAL_STATE, CliError, Target, local_target, resolve_target
from agent_wait.errors import MissingExtraError

__all__ = ("main",)


def _default_app() -> str:
    """The shipped refund example when installed from the wheel; the repository's copy otherwise."""
    return DEFAULT_APP if importlib.util.find_spec("agent_wait.examples") is not None else REPO_APP


def _app(name: str | None, attribute: str) -> Callable[..., Any]:
    # A console script does not put the working directory on sys.path; `--app` names a module there.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    name = name or _default_app()
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise CliError(
            f"cannot import {name} ({exc}); run from the repository root, or pass --app package.module"
        ) from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise CliError(f"{name} has no {attribute}(); --app must name a module that defines it") from None


def _run(args: argparse.Namespace) -> int:
    from agent_wait.cli import _commands

    if args.command == "init":
        from agent_wait.cli._init import init_project

        folder = Path(args.folder)
        for path in init_project(folder, args.name):
            print(f"wrote {path}")
        print(
            f"Next: cd {folder}; pip install -r requirements.txt; agent-wait dev --graph {args.name}.graph:build_graph"
            "; python -m pytest (README.md says more)"
        )
        return 0
    if args.command in ("dev", "demo"):
        from agent_wait.local.stack import require_emulator

        _ignore_broken_pipes_at_exit()

        require_emulator()  # before anything is synthesized: one line naming the extra
    if args.command == "dev":
        from agent_wait.cli._dev import run_dev

        if args.graph:
            from agent_wait.cli._graph_stack import check_graph, graph_template

            check_graph(args.graph)
            template = lambda: graph_template(args.graph)  # noqa: E731
        else:
            template = _app(args.app, "template")
        return run_dev(
            template,
            out=sys.stdout,
            sweep_every=args.sweep_every,
            api_port=args.api_port,
            verbose=args.verbose,
            state_dir=LOCAL_STATE.parent,  # beside local.json: the project's own emulator state
            fresh=args.fresh,
        )
    if args.command == "demo":
        return int(_app(args.app, "demo")(args.scenario))
    if args.command == "push":
        return _push_keys(args)
    if args.command == "link":
        from agent_wait.cli._links import question_link

        print(question_link(_said(local_target()), args.question_id, args.action, approver=args.approver))
        return 0
    if args.command == "token":
        groups = [g.strip() for text in args.groups for g in text.split(",") if g.strip()]
        print(_api.sign_in(_said(local_target()), args.user, groups, expires_in=args.expires_in))
        return 0
    target = _said(
        resolve_target(
            args.outputs, stack=args.stack, region=args.region, profile=args.profile, endpoint_url=args.endpoint_url
        )
    )
    if getattr(args, "output", None) == "json":
        args.json = True
    if args.command == "start":
        message_id = _commands.start(target, args.thread_id, _commands.parse_input(args.input), args.start_id)
        print(f"start sent for thread {args.thread_id} (message {message_id}) via {target.source}")
        return 0
    if args.command == "questions" and args.show:
        return _questions.show(target, args)
    if args.command == "questions":
        rows = _commands.list_questions(target, args.status)
        for row in sorted(rows, key=lambda r: (r.get("asked_at") or "", r.get("question_id") or "")):
            if args.json:
                print(
                    json.dumps(
                        {
                            k: row.get(k)
                            for k in (
                                *("thread_id", "question_id", "status", "outcome", "agent", "expires_at"),
                                *("allowed_actions", "tags", "answered_by", "via", "claimed_by", "reason", "asks"),
                            )
                        }
                    )
                )
            else:
                print(_questions.question_line(row))
        if not rows:
            # JSON lines stay parseable: none at all on stdout, and the words for a person on stderr.
            none = f"no {args.status + ' ' if args.status else ''}questions"
            print(none, file=sys.stderr if args.json else sys.stdout)
        return 0
    more = {"dead-letters": _run_dead_letters, "audit": _export_audit, "extend": run_extend, "grants": _run_grants}
    if args.command in more:
        return more[args.command](target, args)
    if args.command == "failures":
        return _print_failures(_commands.failures(target), as_json=args.json)
    if args.command == "retry":
        failure, retry_id = _commands.retry(target, args.thread_id, args.retry_id)
        what = f"question {failure.target_id}'s decision" if failure.kind == "answer" else f"start {failure.target_id}"
        print(
            f"retry {retry_id} sent for thread {args.thread_id}: applies {what} again "
            f"(it failed with {failure.error} at {failure.failed_at}); watch it with: agent-wait failures"
        )
        return 0
    if args.command == "cancel":
        return _cancel(target, args)
    return _answer(target, args)


def _push_keys(args: argparse.Namespace) -> int:
    import boto3

    from agent_wait.cli._push import store_push_keys

    session = boto3.Session(profile_name=args.profile, region_name=args.region)
    stored = store_push_keys(
        session.client("secretsmanager", endpoint_url=args.endpoint_url), args.secret, rotate=args.rotate
    )
    print(f"{'stored' if stored.created else 'rotated'} the push keys in {stored.arn}")
    print(f"public key (the inbox's applicationServerKey): {stored.public_key}")
    return 0


def _said(target: Target) -> Target:
    """`target`, once the person knows which `agent-wait dev` it is when it serves another folder than this one
    (found among the running devs, `running_dev`): a line on stderr, so JSON lines on stdout stay parseable."""
    here = Path.cwd().resolve()
    if target.folder and not here.is_relative_to(target.folder):
        print(f"agent-wait: using the `agent-wait dev` serving {target.folder} (none runs from here)", file=sys.stderr)
    return target


def _export_audit(target: Any, args: argparse.Namespace) -> int:
    from agent_wait.cli._audit import export, export_grants

    write, what = (export_grants, "grants") if args.verb == "grants" else (export, "questions")
    count = write(target, since=args.since, until=args.until, format=args.audit_format, out=args.out)
    if args.out:
        print(f"{count} {what} written to {args.out}")
    return 0


def _run_grants(target: Any, args: argparse.Namespace) -> int:
    from agent_wait.cli._grants import run_grants

    return run_grants(target, args.verb, args.grant_id, show_all=args.show_all, as_json=args.json)


def _run_dead_letters(target: Any, args: argparse.Namespace) -> int:
    from agent_wait.cli import _dead_letters as dead

    if args.verb == "list":
        if args.reason or args.thread:
            raise CliError("--reason and --thread choose what `dead-letters redrive` moves; `list` shows them all")
        found = dead.list_dead_letters(target)
        for message in found:
            row = message.as_row()
            print(
                json.dumps(row)
                if args.json
                else f"{row['reason']:18} thread={row['thread_id']}  message={row['message_id']}  {row['detail']}"
            )
        if not found:
            print("no dead letters")
        return 0
    moved, kept = dead.redrive(target, reasons=args.reason, thread_id=args.thread)
    for message in moved:
        print(f"redriven  {message.reason:18} thread={message.thread_id}  message={message.message_id}")
    print(f"{len(moved)} redriven to the entry queue; {len(kept)} left on the dead-letter queue")
    return 0


def _answer(target: Any, args: argparse.Namespace) -> int:
    from agent_wait.cli import _commands

    value = _commands.parse_input(args.answer, "--answer", '{"action": "approve"}') if args.answer else None
    ids = list(args.question_id)
    if args.action is None and len(ids) > 1:
        # `answer Q1 Q2 approve`: the last word is the action (so several questions take an ACTION, not --answer)
        args.action = ids.pop()
    args.question_id = ids[0]
    edited = _commands.parse_input(args.args, "--args", '{"amount": 500}') if args.args else None
    if value is not None and (args.action or args.note or edited is not None):
        raise CliError("--answer is the whole answer: leave out ACTION, --note and --args, or leave out --answer")
    if value is None and not args.action:
        raise CliError("say how to answer: an ACTION such as approve, or --answer JSON")
    if edited is not None and not isinstance(edited, dict):
        raise CliError("--args must be a JSON object of the arguments to change, e.g. --args '{\"amount\": 500}'")
    token = args.token or os.environ.get(_api.TOKEN_VARIABLE)
    if len(ids) > 1:
        return _answer_many(target, args, ids, token, value=value, edited=edited)
    if token and not args.queue:
        print(_answer_over_api(target, args, token, value=value, edited=edited))
        return 0
    row = _commands.answer(target, args.question_id, args.action, args.note, args.by, args=edited, value=value)
    what = repr(args.action) if value is None else "(JSON)"
    _, credited = _commands.queue_credit(target, args.by)
    line = (
        f"answer {what} sent on the entry queue for question {args.question_id} on thread {row['thread_id']}, "
        f"{credited}"
    )
    if target.api_url and not args.queue:
        line += f" (no token, so not over the answer API; {_api.TOKEN_VARIABLE} or --token sends it there)"
    print(line)
    return 0


def _cancel(target: Any, args: argparse.Namespace) -> int:
    from agent_wait.cli._operators import cancel

    print(cancel(target, args.question_id, args.reason, token=args.token or os.environ.get(_api.TOKEN_VARIABLE)))
    return 0


def _answer_many(
    target: Any, args: argparse.Namespace, ids: list[str], token: str | None, *, value: Any, edited: Any
) -> int:
    """Several questions answered the same way, each decided on its own by the answer API; non-zero if any was not."""
    from agent_wait.cli._operators import answer_many
    from agent_wait.cli._target import answer_value

    if args.queue or args.by:
        raise CliError(
            "several questions are answered over the answer API, as the token's person: leave out --queue/--by"
        )
    lines, refused = answer_many(target, ids, answer_value(args.action, args.note, edited, value), token=token)
    print("\n".join(lines))
    print(f"{len(ids) - refused} of {len(ids)} decided" + (f"; {refused} refused (see above)" if refused else ""))
    return 1 if refused else 0


def _answer_over_api(
    target: Any, args: argparse.Namespace, token: str, *, value: Any = None, edited: Any = None
) -> str:
    if not target.api_url:
        raise CliError(
            f"a token was given but no answer API is known for {target.source}; leave out --token (and "
            f"unset {_api.TOKEN_VARIABLE}) to answer on the entry queue, or deploy the stack with answer_api=True"
        )
    if args.by:
        raise CliError(
            "--by names the answerer on the queue; over the answer API the token says who you are: "
            "leave out --by, or add --queue"
        )
    return _api.answer(target, args.question_id, args.action, token=token, note=args.note, args=edited, value=value)


def _print_failures(found: Sequence[Any], *, as_json: bool) -> int:
    for failure in found:
        if as_json:
            print(json.dumps({"thread_id": failure.thread_id, **failure.to_item()}))
        else:
            print(
                f"failed    thread={failure.thread_id}  {failure.kind}={failure.target_id}  error={failure.error}"
                f"  at={failure.failed_at}  retries={failure.retries}"
            )
    if not found:
        print("no failed threads")
    elif not as_json:
        print("fix the agent, then: agent-wait retry THREAD  (messages held for it: see the dead-letter queue)")
    return 0


JSII_NODE_VARIABLE = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
"""Silences jsii's banner for the Node versions it lists; `dev`, `demo` and `init --graph` load jsii to synthesize."""
JSII_QUIET_NODE = "20"
"""The Node release whose end-of-life banner is silenced (the one `scripts/dev` silences too): the CDK still runs
on it, and the banner is a dozen lines of `!!` the user cannot act on from here."""


def main(argv: Sequence[str] | None = None) -> int:
    """The console script; returns the exit status (1 on a CliError, with its one-line message)."""
    # Before anything loads jsii (importing aws_cdk starts its Node process, which reads this once).
    os.environ.setdefault(JSII_NODE_VARIABLE, JSII_QUIET_NODE)
    args = build_parser(__doc__ or "").parse_args(argv)
    try:
        return _run(args)
    except (CliError, MissingExtraError) as exc:
        print(f"agent-wait: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # whoever read our output has gone (`agent-wait ... | head`): nobody is left to tell
        _quiet_exit()
        return 1


def _quiet_exit() -> None:
    """Send what is still buffered for stdout nowhere: Python flushes it at exit, into the same broken pipe."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _ignore_broken_pipes_at_exit() -> None:
    """Drop the `BrokenPipeError` jsii's exit hook raises after Ctrl-C: the Node process it writes to is in the
    terminal's process group, so Ctrl-C has ended it already; anything else still reaches the previous hook."""
    hook = sys.unraisablehook
    if getattr(hook, "agent_wait", False):
        return

    def ignore_broken_pipes(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, BrokenPipeError):
            hook(unraisable)

    ignore_broken_pipes.agent_wait = True  # type: ignore[attr-defined]
    sys.unraisablehook = ignore_broken_pipes


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
