"""docs/grants.md's Python snippets run as written, each on its own, and their assertions hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "grants.md"
SNIPPETS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)


def test_the_page_has_its_snippets() -> None:
    assert len(SNIPPETS) == 3


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet-{n}" for n in range(1, len(SNIPPETS) + 1)])
def test_a_snippet_runs_and_its_assertions_hold(code: str) -> None:
    assert "assert" in code
    exec(compile(code, str(PAGE), "exec"), {"__name__": "grants_doc"})
