"""Every error the package raises on purpose is a `WaitError`, and still the builtin type its callers catch."""

from __future__ import annotations

import ast
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime" / "agent_wait"
BUILTINS = {"ValueError", "KeyError", "TypeError", "RuntimeError", "LookupError", "IndexError", "Exception"}


def test_no_module_raises_a_bare_builtin_error() -> None:
    bare = []
    for path in sorted(RUNTIME.rglob("*.py")):
        if "testing" in path.parts:
            continue  # the conformance suites fail with AssertionError, as pytest expects
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            call = node.exc if isinstance(node, ast.Raise) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in BUILTINS:
                bare.append(f"{path.relative_to(RUNTIME)}:{node.lineno} raises {call.func.id}")
    assert bare == [], "raise a WaitError subclass (agent_wait.errors) that is also the builtin callers catch"


def test_no_module_checks_at_run_time_with_assert() -> None:
    # `python -O` drops asserts: a check the code relies on must be an if and a typed error.
    asserts = [
        f"{path.relative_to(RUNTIME)}:{node.lineno}"
        for path in sorted(RUNTIME.rglob("*.py"))
        if "testing" not in path.parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assert)
    ]
    assert asserts == []
