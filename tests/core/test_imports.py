"""Import hygiene: the core is standard library only, and imports point inward.

Direction (DESIGN.md "Target layout"): core ← bindings / `aws` ← engine ← channels (`slack`) ← host ← local ← CLI.
The constructs never import the runtime, and the runtime never imports the constructs or CDK. More walls:

- the engine knows no Lambda, no HTTP and no framework: it imports neither Powertools nor the host, the
  emulator or a binding (adapters are passed in);
- the host imports no agent framework when it is imported: a framework (and the LangGraph checkpoint saver) is
  imported inside the function that builds that framework's adapter, so a Pydantic AI or Strands deployment
  never loads LangGraph;
- the LangGraph checkpoint saver shares the delivery through `agent_wait.asking.delivery`, never the engine;
- nothing but the console script imports the emulator (`agent_wait.local`);
- only the `aws` provider imports botocore; the rest asks it (`agent_wait.aws.errors`) what an AWS failure
  is. `BOTOCORE_ELSEWHERE` names the few exceptions, each with its reason;
- a module whose name starts with `_` is private to its package: no other package imports it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime"
PACKAGE = RUNTIME / "agent_wait"
CONSTRUCTS = ROOT / "constructs" / "agent_wait_cdk"

STDLIB = frozenset(sys.stdlib_module_names)
CDK = frozenset({"agent_wait_cdk", "aws_cdk", "constructs", "cdk_nag", "jsii"})
"""Never imported anywhere in the runtime: the constructs are deployed from, not shipped to, Lambda."""

CORE_MODULES = (
    "agent_wait",
    "agent_wait.errors",
    "agent_wait.policy",
    "agent_wait.contract.envelope",
    "agent_wait.common.ids",
    "agent_wait.contract.publish",
    "agent_wait.contract.schema",
    "agent_wait.contract.settings",
    "agent_wait.common.canonical_json",
    "agent_wait.common.times",
    "agent_wait.common.durations",
    "agent_wait.asking.flow",
    "agent_wait.channels.asked",
    "agent_wait.dialects",
    "agent_wait.dialects.langchain_hitl",
    "agent_wait.dialects.agent_inbox",
    "agent_wait.channels",
    "agent_wait.channels.contract",
    "agent_wait.channels.announce",
    "agent_wait.contract.announcer",
    "agent_wait.channels.announce.channel",
    "agent_wait.channels.announce.preview",
    "agent_wait.channels.announce.log",
    "agent_wait.channels.announce.memory",
    "agent_wait.channels.announce.webhook",
    "agent_wait.channels.announce._signing",
    "agent_wait.testing",
    "agent_wait.testing.announce_contract",
    "agent_wait.testing.channel_contract",
    "agent_wait.ledger",
    "agent_wait.ledger.base",
    "agent_wait.ledger.records",
    "agent_wait.ledger.outcome",
    "agent_wait.asking.delivery",
    "agent_wait.ledger.memory",
    "agent_wait.channels.recipients",
    "agent_wait.people",
    "agent_wait.asking.callbacks",
    "agent_wait.contract.bound_call",
    "agent_wait.policy.new_version",
)


@dataclass(frozen=True)
class Layer:
    """What the modules of one layer may import."""

    name: str
    internal: tuple[str, ...]
    """agent_wait modules it may import (prefixes); the core is always allowed."""
    third_party: frozenset[str] | None
    """Top-level third-party packages it may import; None for any (except CDK)."""


CORE = Layer("core", (), frozenset())
BINDINGS = ("agent_wait.langgraph", "agent_wait.pydantic_ai", "agent_wait.strands")
RECORD = ("agent_wait.channels.records", "agent_wait.channels.sends")
"""The one per-question channel record (`records`) and its sends (`sends`): what Slack, email and Teams sent."""
CHANNELS = (
    "agent_wait.channels.slack",
    "agent_wait.channels.email",
    "agent_wait.channels.teams",
    "agent_wait.channels.shaped",
    "agent_wait.channels.push",
    *RECORD,
)
"""The channel packages (an announcer, and a door when the channel has one) and their record; the host builds them
through their declarations. The plain announcers (`channels.announce`) and the contract are core."""
# Most specific prefix wins. A module not listed here is core: stdlib and the core only.
RULES: dict[str, Layer] = {
    "agent_wait.langgraph": Layer(
        "binding", ("agent_wait.langgraph",), frozenset({"langgraph", "langchain_core", "typing_extensions"})
    ),
    "agent_wait.langgraph.checkpoint": Layer(
        "saver",
        ("agent_wait.langgraph", "agent_wait.aws.errors", "agent_wait.aws.items"),
        frozenset({"langgraph", "langchain_core", "langgraph_checkpoint_aws"}),
    ),
    "agent_wait.pydantic_ai": Layer(
        "binding", ("agent_wait.pydantic_ai",), frozenset({"pydantic_ai", "pydantic", "pydantic_core"})
    ),
    "agent_wait.strands": Layer("binding", ("agent_wait.strands",), frozenset({"strands"})),
    # AWS Lambda durable functions: the durable execution SDK only (the ledger and announcers are passed in).
    "agent_wait.durable": Layer("binding", ("agent_wait.durable",), frozenset({"aws_durable_execution_sdk_python"})),
    "agent_wait.aws": Layer("provider", ("agent_wait.aws",), frozenset({"boto3", "botocore"})),
    # An MCP client's input_required rounds asked through agent-wait: the mcp SDK, and LangGraph's interrupt when used.
    "agent_wait.mcp.input_required": Layer("binding", ("agent_wait.mcp",), frozenset({"mcp", "langgraph"})),
    # jsonschema, boto3 and the SQS queues' error translation (aws.errors) only inside the functions that use them
    # (`test_the_engine_imports_nothing_third_party_when_imported`, `test_the_engine_imports_no_aws_when_imported`).
    "agent_wait.engine": Layer(
        "engine", ("agent_wait.engine", "agent_wait.aws.errors"), frozenset({"jsonschema", "boto3"})
    ),
    # OpenTelemetry's API (the optional `tracing` extra), imported inside the functions that start spans.
    "agent_wait.engine.tracing": Layer("engine", ("agent_wait.engine",), frozenset({"opentelemetry"})),
    # The per-question record: DynamoDB's failures named by aws.errors, imported inside the call that failed.
    "agent_wait.channels.records": Layer(
        "channel record", ("agent_wait.channels.records", "agent_wait.aws.errors"), frozenset()
    ),
    "agent_wait.channels.sends": Layer("channel record", RECORD, frozenset()),
    # A channel people answer in (Slack): its announcer and its door, deciding through the engine; no Lambda, no host.
    "agent_wait.channels.slack": Layer(
        "channel", ("agent_wait.channels.slack", "agent_wait.engine", *RECORD), frozenset({"slack_sdk"})
    ),
    # Teams through a Workflows webhook: the standard library only.
    "agent_wait.channels.teams": Layer(
        "channel", ("agent_wait.channels.teams", "agent_wait.engine", *RECORD), frozenset()
    ),
    # Shaped webhooks: a template per transition, rendered in Jinja2's sandbox.
    "agent_wait.channels.shaped": Layer("channel", ("agent_wait.channels.shaped",), frozenset({"jinja2"})),
    # Email: its announcer renders with Jinja2 and sends through the SES client it is given (AWS errors read lazily).
    "agent_wait.channels.email": Layer(
        "channel",
        ("agent_wait.channels.email", "agent_wait.engine", "agent_wait.aws.errors", *RECORD),
        frozenset({"jinja2", "markupsafe"}),
    ),
    # Web push: pywebpush (and its requests) to send, cryptography to make VAPID keys, inside the functions using them.
    "agent_wait.channels.push": Layer(
        "channel",
        ("agent_wait.channels.push", "agent_wait.aws.errors", *RECORD),
        frozenset({"pywebpush", "requests", "cryptography"}),
    ),
    # The MCP server (a door: `ask_person` decides nothing, a cancel goes through the engine's desk), its wire types
    # on the `mcp` SDK, and a Python client's SigV4 signer; no Lambda, no host.
    "agent_wait.mcp": Layer(
        "door",
        ("agent_wait.mcp", "agent_wait.engine"),
        frozenset({"mcp", "anyio", "httpx2", "pydantic", "boto3", "botocore"}),
    ),
    "agent_wait.host": Layer(
        "host", (*BINDINGS, "agent_wait.aws", "agent_wait.engine", *CHANNELS, "agent_wait.mcp", "agent_wait.host"), None
    ),
    "agent_wait.local": Layer(
        "local",
        (
            *BINDINGS,
            "agent_wait.aws",
            "agent_wait.engine",
            *CHANNELS,
            "agent_wait.mcp",
            "agent_wait.host",
            "agent_wait.local",
        ),
        None,
    ),
    "agent_wait.cli": Layer("cli", ("agent_wait",), None),
    # The ledger suite checks the core's ledger interface: the core and the standard library only.
    "agent_wait.testing.ledger_contract": Layer("testing", ("agent_wait.testing.ledger_contract",), frozenset()),
}

MOVED = {
    "agent_wait.announce": "agent_wait.channels.announce",
    "agent_wait.asked": "agent_wait.channels.asked",
    "agent_wait.callbacks": "agent_wait.asking.callbacks",
    "agent_wait.email": "agent_wait.channels.email",
    "agent_wait.envelope": "agent_wait.contract.envelope",
    "agent_wait.extension": "agent_wait.policy.extension",
    "agent_wait.messages": "agent_wait.contract.messages",
    "agent_wait.recipients": "agent_wait.channels.recipients",
    "agent_wait.schema": "agent_wait.contract.schema",
    "agent_wait.shaped": "agent_wait.channels.shaped",
    "agent_wait.slack": "agent_wait.channels.slack",
    "agent_wait.teams": "agent_wait.channels.teams",
    "agent_wait.versions": "agent_wait.asking.versions",
}
"""Deprecated module paths kept working after issue 41's move (docs/architecture.md, "Moved modules"): each is a
module at the package root that re-exports what moved, and may import nothing else."""
RULES.update({alias: Layer("alias", (target,), frozenset()) for alias, target in MOVED.items()})

FRAMEWORKS = frozenset(
    {"langgraph", "langgraph_checkpoint_aws", "langchain_core", "langchain", "pydantic_ai", "strands"}
)
"""Top-level packages of the agent frameworks (and LangGraph's DynamoDB saver)."""
FRAMEWORK_MODULES = BINDINGS
"""Our packages that import a framework when imported: the bindings (the LangGraph saver among them)."""
BOTOCORE_ELSEWHERE = {
    "agent_wait.cli._target": "reads a named AWS profile: botocore's ProfileNotFound, inside that one function",
    "agent_wait.local.iam": "the emulator's IAM check judges each boto3 call on botocore's events",
    "agent_wait.local.expiry": "the emulator notes when each object is written, by its clock, on botocore's events",
    "agent_wait.local.sigv4": "the local IAM authorizer computes a request's SigV4 signature again: botocore's signer",
    "agent_wait.mcp.signing": "a Python MCP client signs its requests for the IAM route: botocore's SigV4 signer",
}
"""Modules outside `agent_wait.aws` that may import botocore, and why. Keep it short."""


def layer_of(module: str) -> Layer:
    matches = [prefix for prefix in RULES if module == prefix or module.startswith(prefix + ".")]
    return RULES[max(matches, key=len)] if matches else CORE


def is_core(module: str) -> bool:
    return layer_of(module) is CORE


OPTIONAL_IN_CORE = {
    "agent_wait.asking.edits": (
        frozenset({"pydantic"}),
        "reads a @wait function's annotations; imported inside the functions that use it, and optional: every "
        "framework binding brings it, and without it edits are checked by name only",
    ),
}
"""Core modules that may import an optional third-party package inside a function, and why. Keep it short."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(RUNTIME).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, *, is_package: bool) -> list[tuple[int, str]]:
    """Every module a source file imports (relative imports resolved), with its line number."""
    found: list[tuple[int, str]] = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from agent_wait import host` imports agent_wait.host
            found.extend((node.lineno, f"{target}.{alias.name}") for alias in node.names if target == "agent_wait")
    return found


def violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """Why `module` (with this source) breaks the direction rules; empty when it does not."""
    layer = layer_of(module)
    problems = []
    for line, target in imported_modules(source, module, is_package=is_package):
        top = target.split(".")[0]
        if top in CDK:
            problems.append(f"{module}:{line} imports {target}: the runtime never imports CDK or the constructs")
        elif top == "agent_wait":
            if target == "agent_wait" or is_core(target):
                continue
            if not any(target == p or target.startswith(p + ".") for p in layer.internal):
                problems.append(f"{module}:{line} ({layer.name}) imports {target}, which points outward")
        elif top not in STDLIB and layer.third_party is not None and top not in layer.third_party:
            if top in OPTIONAL_IN_CORE.get(module, (frozenset(),))[0]:
                continue
            allowed = sorted(layer.third_party) or "the standard library only"
            problems.append(f"{module}:{line} ({layer.name}) imports third-party {target}; allowed: {allowed}")
    return problems


def _executed_on_import(tree: ast.AST) -> list[ast.stmt]:
    """The import statements that run when the module is imported: not inside a function, not TYPE_CHECKING."""
    found: list[ast.stmt] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(child, ast.If) and ast.unparse(child.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                visit(ast.Module(body=child.orelse, type_ignores=[]))
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            visit(child)

    visit(tree)
    return found


def framework_violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """Frameworks a host module imports as soon as it is imported (it must wait until its adapter is built)."""
    if not (module == "agent_wait.host" or module.startswith("agent_wait.host.")) or module in FRAMEWORK_MODULES:
        return []
    on_import = {node.lineno for node in _executed_on_import(ast.parse(source))}
    problems = []
    for line, target in imported_modules(source, module, is_package=is_package):
        framework = target.split(".")[0] in FRAMEWORKS or any(
            target == prefix or target.startswith(prefix + ".") for prefix in FRAMEWORK_MODULES
        )
        if framework and line in on_import:
            problems.append(f"{module}:{line} (host) imports {target} when imported; import it where it is used")
    return problems


def botocore_violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """botocore imported outside the `aws` provider (anywhere in the module, lazily or not)."""
    if module == "agent_wait.aws" or module.startswith("agent_wait.aws.") or module in BOTOCORE_ELSEWHERE:
        return []
    return [
        f"{module}:{line} imports {target}; only agent_wait.aws imports botocore (use agent_wait.aws.errors)"
        for line, target in imported_modules(source, module, is_package=is_package)
        if target.split(".")[0] == "botocore"
    ]


def private_violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """Imports of another package's private module (`agent_wait.<package>._<module>` from outside `<package>`)."""
    package = module if is_package else module.rpartition(".")[0]
    problems = []
    for line, target in imported_modules(source, module, is_package=is_package):
        parts = target.split(".")
        private = next((i for i, part in enumerate(parts) if part.startswith("_") and i > 0), None)
        if parts[0] != "agent_wait" or private is None:
            continue
        owner = ".".join(parts[:private])
        if not (package == owner or package.startswith(owner + ".")):
            problems.append(f"{module}:{line} imports {target}, private to {owner}")
    return problems


def runtime_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


# --- the checker itself --------------------------------------------------------------------------


@pytest.mark.parametrize("module", CORE_MODULES)
def test_rule_table_classifies_the_core_modules_as_core(module: str):
    assert is_core(module)


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("agent_wait.langgraph", "binding"),
        ("agent_wait.langgraph._ask", "binding"),
        ("agent_wait.pydantic_ai", "binding"),
        ("agent_wait.strands", "binding"),
        ("agent_wait.aws.sns", "provider"),
        ("agent_wait.aws.ledger", "provider"),
        ("agent_wait.engine.router", "engine"),
        ("agent_wait.langgraph.checkpoint.saver", "saver"),
        ("agent_wait.host.router", "host"),
        ("agent_wait.local.stack", "local"),
        ("agent_wait.cli", "cli"),
        ("agent_wait.testing.ledger_contract", "testing"),
        ("agent_wait.channels.slack.channel", "channel"),
        ("agent_wait.channels.records", "channel record"),
        ("agent_wait.channels.sends", "channel record"),
    ],
)
def test_rule_table_classifies_outer_modules(module: str, layer: str):
    assert layer_of(module).name == layer


@pytest.mark.parametrize(
    ("module", "source", "fragment"),
    [
        (
            "agent_wait.contract.envelope",
            "import boto3",
            "(core) imports third-party boto3; allowed: the standard library only",
        ),
        (
            "agent_wait.channels.announce.log",
            "from langgraph.types import interrupt",
            "imports third-party langgraph.types",
        ),
        ("agent_wait.policy", "from agent_wait.langgraph import ask", "(core) imports agent_wait.langgraph"),
        ("agent_wait.contract.announcer", "from ..host import router", "(core) imports agent_wait.host,"),
        ("agent_wait.contract.publish", "from agent_wait import host", "(core) imports agent_wait.host"),
        ("agent_wait.langgraph._ask", "from agent_wait.host.router import x", "(binding) imports agent_wait.host"),
        ("agent_wait.langgraph._ask", "import boto3", "(binding) imports third-party boto3"),
        ("agent_wait.langgraph._ask", "from agent_wait.aws import SnsAnnounce", "(binding) imports agent_wait.aws"),
        ("agent_wait.aws.sns", "from agent_wait.engine import router", "(provider) imports agent_wait.engine"),
        ("agent_wait.aws.sns", "from agent_wait.langgraph import wait", "(provider) imports agent_wait.langgraph"),
        ("agent_wait.engine.router", "from agent_wait.host import settings", "(engine) imports agent_wait.host"),
        ("agent_wait.engine.router", "from agent_wait.local import stack", "(engine) imports agent_wait.local"),
        ("agent_wait.engine.router", "from agent_wait.langgraph import ask", "(engine) imports agent_wait.langgraph"),
        ("agent_wait.engine.router", "import aws_lambda_powertools", "(engine) imports third-party aws_lambda"),
        ("agent_wait.engine.sweep", "import urllib3", "(engine) imports third-party urllib3"),
        ("agent_wait.langgraph.checkpoint.saver", "from agent_wait.engine import lease", "(saver) imports agent"),
        ("agent_wait.host.api", "from agent_wait.local.stack import EmulatedStack", "(host) imports agent_wait.local"),
        ("agent_wait.host.router", "from agent_wait.cli import main", "(host) imports agent_wait.cli"),
        ("agent_wait.host.router", "import aws_cdk", "the runtime never imports CDK"),
        ("agent_wait.cli", "from agent_wait_cdk import AgentWait", "the runtime never imports CDK"),
        ("agent_wait.testing.announce_contract", "import pytest", "(core) imports third-party pytest"),
        (
            "agent_wait.channels.slack.channel",
            "from agent_wait.host._clients import c",
            "(channel) imports agent_wait.host",
        ),
        (
            "agent_wait.channels.teams.channel",
            "from agent_wait.host.links import x",
            "(channel) imports agent_wait.host",
        ),
        (
            "agent_wait.channels.records",
            "from agent_wait.aws.ledger import L",
            "(channel record) imports agent_wait.aws",
        ),
        (
            "agent_wait.channels.contract",
            "from agent_wait.channels.slack import S",
            "(core) imports agent_wait.channels",
        ),
    ],
)
def test_checker_flags_an_outward_import(module: str, source: str, fragment: str):
    # GIVEN a module that imports outward / WHEN checked / THEN the violation is reported
    found = violations(source, module)
    assert any(fragment in problem for problem in found), found


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("agent_wait.contract.envelope", "import json\nfrom agent_wait.errors import EnvelopeError\nfrom . import ids"),
        ("agent_wait.channels.announce.webhook", "from ._signing import sign\nfrom .base import BaseAnnounce"),
        (
            "agent_wait.langgraph._ask",
            "from langgraph.types import interrupt\nfrom agent_wait.contract.publish import publish",
        ),
        ("agent_wait.aws.sqs", "import boto3\nfrom agent_wait.aws._clients import make_client"),
        ("agent_wait.host.router", "import aws_lambda_powertools\nfrom agent_wait.langgraph import resume_command"),
        ("agent_wait.engine.router", "from agent_wait.asking.delivery import current_delivery\nimport jsonschema"),
        ("agent_wait.langgraph.checkpoint.saver", "from agent_wait.asking.delivery import current_delivery"),
        ("agent_wait.local.stack", "from agent_wait.host import router\nimport moto"),
        ("agent_wait.cli", "from agent_wait.local.stack import EmulatedStack"),
        ("agent_wait.channels.records", "def code():\n    from agent_wait.aws.errors import error_code"),
        ("agent_wait.channels.slack.channel", "from agent_wait.channels.records import KEEP_FOR\nimport slack_sdk"),
    ],
)
def test_checker_allows_inward_imports(module: str, source: str):
    assert violations(source, module) == []


@pytest.mark.parametrize(
    ("module", "source", "fragment"),
    [
        ("agent_wait.host._wiring", "import langgraph", "(host) imports langgraph when imported"),
        ("agent_wait.host", "from agent_wait.pydantic_ai import hosted", "imports agent_wait.pydantic_ai when"),
        ("agent_wait.host.router", "try:\n    from strands import Agent\nexcept ImportError:\n    pass", "strands"),
        (
            "agent_wait.host.api",
            "from agent_wait.langgraph.checkpoint.saver import S",
            "imports agent_wait.langgraph.checkpoint.saver",
        ),
    ],
)
def test_checker_flags_a_framework_the_host_imports_when_imported(module: str, source: str, fragment: str):
    found = framework_violations(source, module)
    assert any(fragment in problem for problem in found), found


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("agent_wait.host._wiring", "def adapter():\n    from agent_wait.langgraph import LangGraphAdapter"),
        ("agent_wait.host._wiring", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import langgraph"),
        ("agent_wait.langgraph.checkpoint.saver", "from langgraph_checkpoint_aws import DynamoDBSaver"),
        ("agent_wait.langgraph._ask", "from langgraph.types import interrupt"),
    ],
)
def test_checker_allows_a_framework_imported_where_it_is_used(module: str, source: str):
    assert framework_violations(source, module) == []


@pytest.mark.parametrize(
    ("module", "source", "allowed"),
    [
        ("agent_wait.engine.router", "from botocore.exceptions import ClientError", False),
        ("agent_wait.engine.entry_queue", "def send():\n    import botocore.exceptions", False),
        ("agent_wait.langgraph.checkpoint.saver", "from botocore.exceptions import ClientError", False),
        ("agent_wait.aws.ledger", "from botocore.exceptions import ClientError", True),
        ("agent_wait.aws.errors", "from botocore.exceptions import ClientError", True),
        ("agent_wait.cli._target", "def profile():\n    import botocore.exceptions", True),
    ],
)
def test_checker_allows_botocore_only_in_the_aws_provider(module: str, source: str, allowed: bool):
    assert (botocore_violations(source, module) == []) is allowed


@pytest.mark.parametrize(
    ("module", "source", "allowed"),
    [
        ("agent_wait.engine.router", "from agent_wait.common.times import utc_now", True),
        ("agent_wait.engine.checks", "from agent_wait.engine._answer_schema import schema_problem", True),
        ("agent_wait.host.api._questions", "from agent_wait.host.api._context import ApiContext", True),
        ("agent_wait.host.router", "from agent_wait.host._wiring import build_router", True),
        ("agent_wait.local.stack", "from agent_wait.host._wiring import build_router", False),
        ("agent_wait.engine.router", "from agent_wait.aws._clients import make_client", False),
        ("agent_wait.host._wiring", "from agent_wait.host.api._context import ApiContext", False),
    ],
)
def test_checker_allows_a_private_module_only_inside_its_package(module: str, source: str, allowed: bool):
    assert (private_violations(source, module) == []) is allowed


def test_relative_imports_in_a_package_init_resolve_from_the_package():
    found = imported_modules("from .base import BaseAnnounce", "agent_wait.channels.announce", is_package=True)
    assert found == [(1, "agent_wait.channels.announce.base")]


# --- the code ------------------------------------------------------------------------------------


def test_every_runtime_module_imports_inward_only():
    # GIVEN every module under runtime/agent_wait (the core now; bindings, providers and host as they land)
    problems = []
    for path in runtime_files():
        module = module_name(path)
        problems += violations(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py")
    # THEN none imports outward, none imports a third-party package its layer may not, none imports CDK
    assert problems == [], "\n".join(problems)


def test_the_host_imports_no_framework_when_imported():
    # GIVEN every host module / THEN none imports a framework (or the LangGraph saver) until it builds an adapter
    problems = []
    for path in runtime_files():
        module = module_name(path)
        problems += framework_violations(
            path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py"
        )
    assert problems == [], "\n".join(problems)


def test_the_engine_imports_nothing_third_party_when_imported():
    # GIVEN every engine module / THEN what it runs on import is the standard library and agent_wait only
    problems = []
    for path in runtime_files():
        module = module_name(path)
        if not module.startswith("agent_wait.engine"):
            continue
        source = path.read_text(encoding="utf-8")
        on_import = {node.lineno for node in _executed_on_import(ast.parse(source))}
        for line, target in imported_modules(source, module, is_package=path.name == "__init__.py"):
            top = target.split(".")[0]
            if line in on_import and top not in STDLIB and top != "agent_wait":
                problems.append(f"{module}:{line} imports {target} when imported")
    assert problems == [], "\n".join(problems)


def test_the_engine_imports_no_aws_when_imported():
    # GIVEN every engine module / THEN none imports agent_wait.aws on import: only the SQS queues do, when they call
    problems = []
    for path in runtime_files():
        module = module_name(path)
        if not module.startswith("agent_wait.engine"):
            continue
        source = path.read_text(encoding="utf-8")
        on_import = {node.lineno for node in _executed_on_import(ast.parse(source))}
        for line, target in imported_modules(source, module, is_package=path.name == "__init__.py"):
            if line in on_import and target.startswith("agent_wait.aws"):
                problems.append(f"{module}:{line} imports {target} when imported")
    assert problems == [], "\n".join(problems)


def test_only_the_aws_provider_imports_botocore():
    problems = []
    for path in runtime_files():
        module = module_name(path)
        problems += botocore_violations(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py")
    assert problems == [], "\n".join(problems)


def test_no_module_imports_another_packages_private_module():
    problems = []
    for path in runtime_files():
        module = module_name(path)
        problems += private_violations(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py")
    assert problems == [], "\n".join(problems)


def test_the_modules_allowed_botocore_exist():
    present = {module_name(path) for path in runtime_files()}
    assert set(BOTOCORE_ELSEWHERE) <= present


def test_the_core_modules_exist_where_the_rule_table_expects_them():
    present = {module_name(path) for path in runtime_files()}
    assert set(CORE_MODULES) <= present


def test_constructs_never_import_the_runtime():
    # The constructs name runtime handlers by string; the runtime is bundled for Lambda, not installed beside CDK.
    problems = []
    for path in sorted(CONSTRUCTS.rglob("*.py")) if CONSTRUCTS.exists() else []:
        module = "agent_wait_cdk." + ".".join(path.relative_to(CONSTRUCTS).with_suffix("").parts)
        for line, target in imported_modules(path.read_text(encoding="utf-8"), module, is_package=False):
            if target.split(".")[0] == "agent_wait":
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert problems == [], "\n".join(problems)


# --- what importing really loads -----------------------------------------------------------------

PROBE = textwrap.dedent(
    """
    import json, sys
    before = set(sys.modules)
    import importlib
    for name in sys.argv[1:]:
        importlib.import_module(name)
    print(json.dumps(sorted(set(sys.modules) - before)))
    """
)


def loaded_by(*modules: str) -> list[str]:
    """The modules a fresh interpreter loads to import `modules` (isolated: no PYTHONPATH, no user site)."""
    out = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, *modules], capture_output=True, text=True, check=True, cwd=ROOT, timeout=60
    )
    return json.loads(out.stdout)


def test_importing_the_core_loads_no_third_party_module():
    # GIVEN a fresh interpreter / WHEN it imports agent_wait and every core module (listed or found on disk)
    core = sorted({*CORE_MODULES, *(m for m in map(module_name, runtime_files()) if is_core(m))})
    loaded = loaded_by(*core)
    # THEN everything it loaded is the standard library or agent_wait itself
    outside = [m for m in loaded if m.split(".")[0] not in STDLIB and m.split(".")[0] != "agent_wait"]
    assert "agent_wait" in loaded
    assert outside == []


def test_importing_the_core_does_not_load_bindings_providers_or_host():
    loaded = loaded_by("agent_wait")
    outer = [m for m in loaded if m.startswith("agent_wait.") and not is_core(m)]
    assert outer == []


def test_importing_the_host_loads_no_framework():
    # GIVEN a fresh interpreter / WHEN it imports every host module but the LangGraph saver
    host = sorted(
        m
        for m in map(module_name, runtime_files())
        if (m == "agent_wait.host" or m.startswith("agent_wait.host.")) and m not in FRAMEWORK_MODULES
    )
    loaded = loaded_by(*host)
    # THEN no framework, and no binding, was loaded
    frameworks = sorted(
        m
        for m in loaded
        if m.split(".")[0] in FRAMEWORKS or any(m == p or m.startswith(p + ".") for p in FRAMEWORK_MODULES)
    )
    assert frameworks == []


def test_the_answer_apis_cold_start_loads_neither_ag_ui_nor_pydantic():
    """A third of the answer API's imports were AG-UI's shapes (issue 46): its routes import them on first use."""
    # GIVEN a fresh interpreter / WHEN it imports the answer API's handler module, as Lambda's init does
    loaded = loaded_by("agent_wait.host.api")
    # THEN AG-UI's package and pydantic wait for a request that needs them
    assert [m for m in loaded if m.split(".")[0] in ("ag_ui", "pydantic", "pydantic_core")] == []
    assert "agent_wait.host.api._agui" in loaded  # its routes are there, only their shapes wait


def test_schema_create_table_request_matches_the_table_shape():
    # GIVEN the ledger shape / WHEN it is turned into a CreateTable request
    from agent_wait.contract.schema import CHECKPOINT_TABLE, QUESTION_TABLE

    request = QUESTION_TABLE.create_table_request("q")
    # THEN keys, every index and its keys are there, all strings, on demand
    assert request["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert [
        (i["IndexName"], [k["AttributeName"] for k in i["KeySchema"]]) for i in request["GlobalSecondaryIndexes"]
    ] == [(index.name, [index.partition_key, index.sort_key]) for index in QUESTION_TABLE.indexes]
    assert {a["AttributeType"] for a in request["AttributeDefinitions"]} == {"S"}
    assert request["BillingMode"] == "PAY_PER_REQUEST"
    assert "GlobalSecondaryIndexes" not in CHECKPOINT_TABLE.create_table_request("c")


LONG_MODULE = 420
"""Lines past which a module says why it is long (`Long on purpose:` in its docstring), or is split by job."""


def test_a_long_runtime_module_says_why_at_its_top():
    too_long = []
    for path in runtime_files():
        lines = path.read_text(encoding="utf-8").count("\n")
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if lines > LONG_MODULE and "Long on purpose:" not in docstring:
            too_long.append(f"{module_name(path)} ({lines} lines)")
    assert too_long == [], f"split these by job, or say why at their top: {too_long}"


@pytest.mark.parametrize(("alias", "target"), sorted(MOVED.items()))
def test_a_moved_modules_old_path_still_imports_every_public_name_and_says_where_it_went(
    alias: str, target: str
) -> None:
    """Code written before the move runs: the old path gives the same objects, and warns once with the new path."""
    code = textwrap.dedent(
        f"""
        import importlib, json, sys, warnings
        target = importlib.import_module({target!r})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            alias = importlib.import_module({alias!r})
        same = sorted(name for name in target.__all__ if getattr(alias, name) is getattr(target, name))
        print(json.dumps([sorted(target.__all__), sorted(alias.__all__), same, [str(w.message) for w in caught]]))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT, timeout=60)
    public, aliased, same, warned = json.loads(out.stdout)
    assert aliased == public
    assert same == public
    assert [message for message in warned if alias in message and target in message], warned


def test_the_package_root_holds_only_its_entry_points_the_moved_aliases_and_folders() -> None:
    """docs/architecture.md names each module at the root; everything else lives in a folder that says what it is."""
    root_modules = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert root_modules == sorted(["errors", *(alias.rpartition(".")[2] for alias in MOVED)])
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    missing = [name for name in root_modules if f"agent_wait.{name}" not in architecture]
    assert missing == [], f"docs/architecture.md does not name these root modules: {missing}"
