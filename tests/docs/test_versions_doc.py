"""docs/versions.md: its python snippets run, in order, in one namespace, and print what the page says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

from agent_wait.langgraph import VersionedGraph

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "versions.md"
SNIPPET = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_the_versions_walkthrough_fails_visibly_then_resumes_under_a_migration() -> None:
    page = DOC.read_text(encoding="utf-8")
    snippets = SNIPPET.findall(page)
    assert len(snippets) == 2, "the walkthrough, the hosted router's versioned(...)"
    namespace: dict[str, Any] = {"__name__": "versions_doc"}
    printed = io.StringIO()

    with contextlib.redirect_stdout(printed):
        for snippet in snippets:
            # dont_inherit: annotations evaluated as a reader's module would, not postponed like this file's
            exec(compile(snippet, str(DOC), "exec", dont_inherit=True), namespace)  # the page's own code

    assert printed.getvalue().splitlines() == ["version_changed", "retried True"]
    assert "It prints `version_changed`, then `retried True`." in page, "the page says what it prints"
    agent = namespace["agent"]
    assert isinstance(agent, VersionedGraph)
    assert (agent.version, agent.migration) == ("2", namespace["migrate"])
