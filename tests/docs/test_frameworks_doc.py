"""docs/frameworks.md: every python snippet runs, in order, in one namespace, with a model standing in for yours.

The page leaves two names to the reader: `model` (their model provider) and, for Strands, `session_manager`.
Here Pydantic AI's own `TestModel` and the scripted Strands model of tests/strands stand in, so each run
really parks on the question, is published, and resumes with an approval; the page's own asserts check that
the tool's body ran once.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.test import TestModel
from strands.session.file_session_manager import FileSessionManager

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "frameworks.md"
SNIPPET = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _scripted_strands_model() -> Any:
    """tests/strands/strands_script.py's model, calling `issue_refund` once (that folder is not a package)."""
    spec = importlib.util.spec_from_file_location("strands_script", ROOT / "tests" / "strands" / "strands_script.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ScriptedModel([("issue_refund", {"order_id": "o-1", "amount": 900}, "tool-use-1")])


def test_every_python_snippet_in_the_frameworks_doc_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snippets = SNIPPET.findall(DOC.read_text(encoding="utf-8"))
    assert len(snippets) == 4, "expected the Pydantic AI, Strands and two hosting snippets"
    given: list[dict[str, Any]] = [
        {"model": TestModel()},
        {
            "model": _scripted_strands_model(),
            "session_manager": FileSessionManager(session_id="order-1", storage_dir=str(tmp_path)),
        },
        {"model": TestModel()},
        {},
    ]
    # A module of its own, as `my_app/agents.py` would be (a dataclass looks its module up in sys.modules)
    module = types.ModuleType("frameworks_doc")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace: dict[str, Any] = module.__dict__
    hosted: list[Any] = []
    for number, (code, names) in enumerate(zip(snippets, given, strict=True), start=1):
        namespace.update(names)
        try:
            exec(compile(code, f"{DOC.name}: snippet {number}", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"snippet {number} of {DOC.name} failed: {exc!r}\n{code}") from exc
        if "refund_agent" in namespace:
            hosted.append(namespace.pop("refund_agent"))
    # THEN both hosting snippets name what the router recognises as a hosted agent
    assert len(hosted) == 2
    assert all(callable(getattr(value, "agent_wait_adapter", None)) for value in hosted)
