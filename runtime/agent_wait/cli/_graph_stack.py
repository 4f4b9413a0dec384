"""`agent-wait dev --graph my_pkg.graph:build`: any graph on the default `AgentWait` shape, with no glue module.

The template is `AgentWait` with its defaults around the named graph, synthesized in this process without a
bundle: the local stack deploys only its tables, queues, topic and bus, and runs the router, the sweep and
the answer API here, importing the graph from the current directory.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any

from agent_wait.cli._target import CliError
from agent_wait.contract.schema import Settings
from agent_wait.errors import require_extra

__all__ = ("check_graph", "graph_template")

_SPEC = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def check_graph(spec: str) -> None:
    """Fail now, with what to fix, when `spec` cannot name a graph the router could import.

    Raises:
        CliError: not `package.module:attribute`, the module does not import from the current directory,
            or it has no such attribute.
    """
    if not _SPEC.fullmatch(spec):
        raise CliError(
            f"--graph must look like package.module:attribute, e.g. my_agent.graph:build_graph; got {spec!r}"
        )
    if os.getcwd() not in sys.path:  # the router imports the graph from here, as a console script would not
        sys.path.insert(0, os.getcwd())
    module_name, attribute = spec.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(
            f"cannot import {module_name} ({exc}); run agent-wait dev from the folder that holds it"
        ) from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise CliError(f"{module_name} has no {attribute}; --graph names a compiled graph or a factory")
        target = getattr(target, part)
    _check_agent(spec, target)


def _check_agent(spec: str, target: Any) -> None:
    """Build the router's adapter around `target` as the router will, with an in-memory checkpointer and a
    store that is never called, so a wrong attribute fails here, in a second, rather than on the first start.

    Raises:
        CliError: `target` is not a graph, a factory of one, or an agent the router can host (says why).
    """
    import boto3
    from langgraph.checkpoint.memory import InMemorySaver

    from agent_wait.errors import ConfigurationError
    from agent_wait.host import adapter_for

    # Never called: a Pydantic AI or Strands store only keeps the client for later.
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url="http://127.0.0.1:9")
    try:
        adapter_for(target, InMemorySaver(), checkpoint_table="agent-wait-dev-check", client=client)
    except ConfigurationError as exc:
        # The router's words name its variable; here the user typed --graph.
        problems = "; ".join(p.replace(f"{Settings.GRAPH.value} ", "--graph ") for p in exc.problems)
        raise CliError(f"--graph {spec} cannot run: {problems}") from None


def graph_template(spec: str) -> dict[str, Any]:
    """`agent_wait_cdk.local_template.template_for_graph(spec)`, loaded by name as `--app` modules are: the
    runtime never imports CDK, which only this local command needs (the `local` extra brings it).

    Raises:
        MissingExtraError: the constructs are not installed.
    """
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")  # before jsii starts, as `main` does
    require_extra("agent-wait dev --graph", "agent_wait_cdk", "local")  # imports the constructs, so starts jsii
    module = importlib.import_module("agent_wait_cdk.local_template")
    return module.template_for_graph(spec)
