"""docs/dialects.md: the MCP section's python snippet runs (an MCP server in process, the helper parking in place)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "dialects.md"
SNIPPET = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_the_input_required_snippet_runs() -> None:
    (snippet,) = SNIPPET.findall(DOC.read_text(encoding="utf-8"))
    exec(compile(snippet, str(DOC), "exec"), {"__name__": "dialects_doc"})  # its own asserts check the result
