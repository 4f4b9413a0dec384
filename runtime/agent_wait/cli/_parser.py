"""The `agent-wait` command line's parser: every command, what it is for, its options and their defaults."""

from __future__ import annotations

import argparse
from typing import Any

from agent_wait.cli import _api
from agent_wait.cli._extend import add_extend_arguments
from agent_wait.cli._operators import add_cancel_arguments

__all__ = ("DEFAULT_APP", "REPO_APP", "build_parser")

DEFAULT_APP = "agent_wait.examples.refund_agent.local"
"""The module that provides `template()` (and `demo(argv)`) for `dev` and `demo`: the refund agent, as the wheel
ships it. In a checkout of the repository (where the runtime is installed from source) it is `REPO_APP`."""
REPO_APP = "examples.refund_agent.local"


def _command(commands: Any, name: str, text: str, more: str = "") -> argparse.ArgumentParser:
    """A command whose `--help` page opens with what it is for (`text`, also its line in `agent-wait --help`)."""
    description = f"{text[0].upper()}{text[1:]}." + (f" {more}" if more else "")
    return commands.add_parser(name, help=text, description=description)


_ON_A_STACK = (
    "It talks to the running `agent-wait dev` (found from the folder it runs in or any folder below it), or to a "
    "deployed stack named with --stack or --outputs."
)


def build_parser(description: str) -> argparse.ArgumentParser:
    """The `agent-wait` command line: every command, its options and their defaults."""
    parser = argparse.ArgumentParser(
        prog="agent-wait", description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)

    init = _command(commands, "init", "write a small, working project: a graph that asks, a CDK app, a test")
    init.add_argument("folder", nargs="?", default=".", help="where (default: here)")
    init.add_argument("--name", default="my_agent", help="the graph's package name (default: my_agent)")

    dev = _command(
        commands,
        "dev",
        "run the local stack and print each envelope as it is announced",
        "Runs on an embedded AWS emulator until Ctrl-C; other terminals reach it from this folder or any below it.",
    )
    source = dev.add_mutually_exclusive_group()
    source.add_argument("--app", help=f"module providing template() (default: the refund example, {DEFAULT_APP})")
    source.add_argument(
        "--graph",
        metavar="MODULE:ATTR",
        help="run this graph on the default AgentWait stack, no --app module needed (default: none, --app's stack)",
    )
    dev.add_argument(
        "--sweep-every", type=float, default=60.0, metavar="SECONDS", help="run the sweep this often (default: 60)"
    )
    dev.add_argument(
        "--api-port", type=int, default=0, metavar="PORT", help="the answer API's port (default: this folder's last)"
    )
    dev.add_argument(
        "--fresh",
        action="store_true",
        help="start empty: delete the state the last run saved in .agent-wait/ (default: carry on where it stopped)",
    )
    dev.add_argument(
        "--verbose",
        action="store_true",
        help="also print the handlers' JSON log records and the traceback of each failed turn, or of a template that "
        "fails to synthesize (default: readable lines, and the error alone)",
    )

    token = _command(commands, "token", "print a bearer token from the running agent-wait dev's sign-in")
    token.add_argument("--user", required=True, help="who signs in, e.g. alice@example.com")
    token.add_argument(
        "--groups",
        action="append",
        default=[],
        metavar="GROUP[,GROUP]",
        help="their groups, e.g. finance (default: none)",
    )
    token.add_argument("--expires-in", type=int, metavar="SECONDS", help="how long the token is valid (default: 3600)")

    link = _command(
        commands, "link", "print a signed link that answers a question on the running agent-wait dev, once, when opened"
    )
    link.add_argument("question_id", metavar="QUESTION", help="an open question's id (see: agent-wait questions)")
    link.add_argument("action", metavar="ACTION", help="the action the link answers with, e.g. approve")
    link.add_argument(
        "--for", dest="approver", metavar="PERSON", help="who the link is made for (default: nobody, 'signed link')"
    )

    demo = _command(commands, "demo", "run the refund-agent scenarios, narrated")
    demo.add_argument("--app", help=f"module providing demo(argv) (default: the refund example, {DEFAULT_APP})")
    demo.add_argument("scenario", nargs="*", help="run only these scenarios, by name (default: all)")

    push = _command(
        commands,
        "push",
        "make the VAPID key pair web push is sent with, and store it in Secrets Manager",
        "Prints the secret's ARN (for AgentWait(push=PushProps(keys_secret=...))) and the public key (docs/phone.md).",
    )
    push.add_argument("verb", choices=("keys",), help="keys: make a key pair and store it")
    push.add_argument("--secret", required=True, metavar="NAME", help="the secret's name, e.g. agent-wait/push-keys")
    push.add_argument(
        "--rotate", action="store_true", help="put a new pair in the existing secret (default: create it, once)"
    )
    push.add_argument("--region", help="the AWS region (default: your AWS config's)")
    push.add_argument("--profile", help="the AWS CLI profile to sign requests with (default: the default chain)")
    push.add_argument("--endpoint-url", metavar="URL", help="an AWS endpoint, e.g. an emulator (default: AWS's own)")

    _add_stack_commands(commands)
    return parser


def _add_grants_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("verb", choices=("list", "show", "revoke"), help="list them, show one, or revoke one")
    sub.add_argument("grant_id", nargs="?", metavar="GRANT", help="the grant's id (see: agent-wait grants list)")
    sub.add_argument("--all", dest="show_all", action="store_true", help="list revoked, expired and used-up grants too")
    sub.add_argument("--json", action="store_true", help="print grants as JSON (list: one per line)")


def _add_stack_commands(commands: Any) -> None:
    """The commands that talk to a running stack, each with the options that find it."""
    commands_on_a_stack = (
        ("start", "send a start message"),
        ("questions", "list questions, or show one"),
        ("answer", "answer one question, or several with the same answer"),
        ("cancel", "cancel an open question with a reason: the agent receives the policy's cancellation answer"),
        ("failures", "list failed threads"),
        ("retry", "apply a failed thread's recorded start or decision again, once"),
        ("dead-letters", "list the dead letters with their reasons, or redrive them"),
        ("audit", "export the audit trail: every question asked or decided in a window, with who decided it"),
        ("grants", "list, show or revoke standing grants (approvals that decide later asks for a while)"),
        ("extend", "move an open question's deadline later, as its policy allows (over the answer API)"),
    )
    for name, text in commands_on_a_stack:
        sub = _command(commands, name, text, _ON_A_STACK)
        where = sub.add_argument_group("which stack (as the aws CLI finds it; default: the running agent-wait dev)")
        where.add_argument(
            "--stack", metavar="NAME", help="a deployed stack, found by its CloudFormation outputs (default: none)"
        )
        where.add_argument("--outputs", metavar="FILE", help="cdk-outputs.json of a deployed stack (default: none)")
        where.add_argument("--region", help="the stack's AWS region (default: the stack's, else your AWS config's)")
        where.add_argument(
            "--profile", help="the AWS CLI profile to sign requests with (default: the default credential chain)"
        )
        where.add_argument(
            "--endpoint-url",
            metavar="URL",
            help="an AWS endpoint, e.g. an emulator or a VPC endpoint (default: AWS's own, or the dev's emulator)",
        )
        if name in ("questions", "failures", "dead-letters"):
            sub.add_argument(
                "--output", choices=("table", "json"), default="table", help="table, or JSON lines (default: table)"
            )
        if name == "start":
            sub.add_argument("thread_id", metavar="THREAD", help="the thread to start: a new one, or a new turn of one")
            sub.add_argument("--input", required=True, metavar="JSON", help="the agent's input, as JSON")
            sub.add_argument(
                "--start-id",
                metavar="ID",
                help="your id for this start; sending the same one again starts once (default: a new id each time)",
            )
        elif name == "questions":
            sub.add_argument("show", nargs="*", metavar="show QUESTION", help="show one question in full")
            sub.add_argument(
                "--status",
                help="open; answered, expired, cancelled or withdrawn (what decided it, whether or not the agent "
                "resumed since); resumed or failed (what the agent did with it). (default: every question)",
            )
            sub.add_argument("--json", action="store_true", help="print rows as JSON lines")
        elif name == "failures":
            sub.add_argument("--json", action="store_true", help="print failures as JSON lines")
        elif name == "dead-letters":
            sub.add_argument(
                "verb", choices=("list", "redrive"), help="list them, or move them back to the entry queue"
            )
            sub.add_argument(
                "--reason", action="append", default=[], help="redrive only this reason, repeatable (default: all)"
            )
            sub.add_argument(
                "--thread", metavar="THREAD", help="redrive only this thread's dead letters (default: every thread's)"
            )
            sub.add_argument("--json", action="store_true", help="print dead letters as JSON lines")
        elif name == "audit":
            sub.add_argument(
                "verb",
                choices=("export", "grants"),
                help="export: write the trail as JSON lines or CSV; grants: write the standing grants in force in the "
                "window, each with the questions it decided",
            )
            sub.add_argument(
                "--since", required=True, metavar="TIME", help="from this RFC 3339 time or date (UTC), e.g. 2026-03-01"
            )
            sub.add_argument("--until", metavar="TIME", help="up to this time or date, not included (default: now)")
            sub.add_argument(
                "--format", dest="audit_format", default="jsonl", metavar="FORMAT", help="jsonl or csv (default: jsonl)"
            )
            sub.add_argument("--out", metavar="FILE", help="write to this file (default: standard output)")
        elif name == "grants":
            _add_grants_arguments(sub)
        elif name == "extend":
            add_extend_arguments(sub)
        elif name == "cancel":
            add_cancel_arguments(sub)
        elif name == "retry":
            sub.add_argument("thread_id", metavar="THREAD", help="a failed thread (see: agent-wait failures)")
            sub.add_argument(
                "--retry-id", help="your id for this retry; sending the same one twice retries once (default: a new id)"
            )
        else:
            sub.add_argument(
                "question_id",
                nargs="+",
                metavar="QUESTION",
                help="the question's id (see: agent-wait questions); several ids answer each the same way",
            )
            sub.add_argument(
                "action",
                nargs="?",
                metavar="ACTION",
                help="one of the question's allowed actions, e.g. approve (or give --answer)",
            )
            sub.add_argument("--note", help="a note sent with the answer (default: none)")
            sub.add_argument(
                "--args",
                metavar="JSON",
                help="edited arguments for the waiting call, as a JSON object (default: the call's own)",
            )
            sub.add_argument(
                "--answer",
                metavar="JSON",
                help="any JSON answer, sent as it is, instead of ACTION (default: ACTION with --note and --args)",
            )
            sub.add_argument(
                "--token", help=f"answer over the answer API with this bearer token (default: ${_api.TOKEN_VARIABLE})"
            )
            sub.add_argument("--queue", action="store_true", help="send on the entry queue even when an API is known")
            sub.add_argument(
                "--by",
                help="who is answering, on the queue; over the API the token says who (default: on agent-wait dev, "
                "its dev user dev@example.com; elsewhere the queue sender's IAM identity)",
            )
