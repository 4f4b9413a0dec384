"""docs/proving.md's Python snippets run as written, each on its own, and their assertions hold; the refusal reasons
it lists are the engine's passkey reasons."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_wait.engine import RefusalReason

PAGE = Path(__file__).resolve().parents[2] / "docs" / "proving.md"
TEXT = PAGE.read_text(encoding="utf-8")
SNIPPETS = re.findall(r"^```python\n(.*?)^```", TEXT, flags=re.MULTILINE | re.DOTALL)


def test_the_page_has_its_snippets() -> None:
    assert len(SNIPPETS) == 3


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet-{n}" for n in range(1, len(SNIPPETS) + 1)])
def test_a_snippet_runs_and_its_assertions_hold(code: str) -> None:
    assert "assert" in code or "pytest.raises" in code
    exec(compile(code, str(PAGE), "exec"), {"__name__": "proving_doc"})


def test_the_refusals_table_names_every_passkey_reason() -> None:
    section = TEXT.split("## The refusals\n", 1)[1]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE))
    assert listed == {reason.value for reason in RefusalReason if reason.value.startswith("passkey_")}
