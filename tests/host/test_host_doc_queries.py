"""docs/host.md's "read them through the ledger" snippet returns the question a start asked, on the moto stack."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.support.aws_stack import HostStack, start_message

from agent_wait.host import HostSettings, build_router

DOC = Path(__file__).resolve().parents[2] / "docs" / "host.md"


def test_the_ledger_queries_in_host_md_find_an_open_question(host: HostStack, unique: str) -> None:
    (snippet,) = [
        b
        for b in re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
        if "def open_questions" in b
    ]
    found: dict[str, Any] = {}
    exec(snippet, found)  # the page's own code
    router = build_router(HostSettings.from_env("router"))
    (question_id,) = router.handle(json.dumps(start_message(f"t-{unique}", "o-1"))).asked
    ledger = host.ledger()
    assert [r.question_id for r in found["open_questions"](ledger)] == [question_id]
    assert [r.question_id for r in found["overdue_questions"](ledger, "2999-01-01T00:00:00Z")] == [question_id]
    assert found["overdue_questions"](ledger, "2000-01-01T00:00:00Z") == []
    assert [r.question_id for r in found["due_questions"](ledger)] == []  # announced; nothing due yet
