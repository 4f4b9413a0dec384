"""Importing the LangGraph binding without the `langgraph` extra names the extra to install."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from agent_wait import MissingExtraError

MESSAGE = (
    "agent_wait.langgraph needs langgraph, which is not installed; install it with: pip install 'agent-wait[langgraph]'"
)


@pytest.fixture
def without_langgraph(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide langgraph (and forget the binding) for one test; monkeypatch puts everything back."""
    for name in list(sys.modules):
        if name == "agent_wait.langgraph" or name.startswith("agent_wait.langgraph."):
            monkeypatch.delitem(sys.modules, name)
        elif name.startswith("langgraph."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "langgraph", None)


@pytest.mark.usefixtures("without_langgraph")
@pytest.mark.parametrize("module", ["agent_wait.langgraph", "agent_wait.langgraph._ask"])
def test_importing_the_binding_without_langgraph_raises_missing_extra_naming_the_extra(module: str):
    # GIVEN langgraph is not installed
    # WHEN the binding (or one of its modules) is imported
    with pytest.raises(MissingExtraError, match=re.escape(MESSAGE)) as raised:
        importlib.import_module(module)
    # THEN the error is an ImportError that carries the extra and the package, and keeps the cause
    assert isinstance(raised.value, ImportError)
    assert (raised.value.extra, raised.value.package) == ("langgraph", "langgraph")
    assert isinstance(raised.value.__cause__, ImportError)


def test_the_binding_imports_again_once_langgraph_is_back():
    # GIVEN the fixture above has restored sys.modules
    # WHEN the binding is imported
    module = importlib.import_module("agent_wait.langgraph")
    # THEN its public names are there
    assert {"ask", "wait", "publish_interrupts", "is_answer", "resume_command"} <= set(module.__all__)
