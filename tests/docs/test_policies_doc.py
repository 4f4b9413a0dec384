"""docs/policies.md's standing-grants snippet runs as written."""

from __future__ import annotations

from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "policies.md"


def _snippet(section: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    body = text[text.index(section) :]
    start = body.index("```python\n") + len("```python\n")
    return body[start : body.index("```", start)]


def test_the_standing_grants_snippet_runs_and_its_assertions_hold() -> None:
    code = _snippet("## Standing grants: `grants`")
    assert "grant_terms" in code
    assert "assert" in code
    exec(compile(code, str(PAGE), "exec"), {"__name__": "policies_doc"})
