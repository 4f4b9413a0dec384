"""docs/tracing.md: its python snippet runs and prints what the page says.

It sets OpenTelemetry's global tracer provider, which a process may set only once, so it runs in a fresh
interpreter of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "tracing.md"
SNIPPET = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_the_tracing_walkthrough_links_the_resume_to_the_ask() -> None:
    page = DOC.read_text(encoding="utf-8")
    (snippet,) = SNIPPET.findall(page)
    run = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["[True]", "True"]
    assert "It prints `[True]` (the resume links to the ask) and `True`" in page, "the page says what it prints"
