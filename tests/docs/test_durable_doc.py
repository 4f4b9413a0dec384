"""docs/durable-functions.md: its python snippets run, in order, in one namespace, and print what the page says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "durable-functions.md"
SNIPPET = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_the_durable_functions_walkthrough_runs_to_an_answered_question() -> None:
    page = DOC.read_text(encoding="utf-8")
    snippets = SNIPPET.findall(page)
    assert len(snippets) == 3, "the handler, the start, the answer"
    namespace: dict[str, Any] = {"__name__": "durable_functions_doc"}
    printed = io.StringIO()

    with contextlib.redirect_stdout(printed):
        for snippet in snippets:
            exec(compile(snippet, str(DOC), "exec"), namespace)  # the page's own code

    lines = printed.getvalue().splitlines()
    assert lines == [
        "True {'refund': 'A-1', 'amount': 900} True",
        "applied",
        "{'refunded': 900}",
        "['wait.answered', 'wait.resumed']",
    ]
    said = (
        "It prints `True {'refund': 'A-1', 'amount': 900} True`, then `applied`, `{'refunded': 900}` and\n"
        "`['wait.answered', 'wait.resumed']`"
    )
    assert said in page, "the page says what it prints"
