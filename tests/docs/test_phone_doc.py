"""docs/phone.md's Python snippets run as written: what a push shows (its `python` block without CDK), and the
construct (synthesized in tests/cdk/test_push_construct.py)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = (Path(__file__).resolve().parents[2] / "docs" / "phone.md").read_text(encoding="utf-8")
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)


def test_what_a_push_shows_runs_as_written() -> None:
    (payload,) = [snippet for snippet in SNIPPETS if "push_payload" in snippet]
    exec(compile(payload, "docs/phone.md", "exec"), {})  # its asserts are the page's claims
