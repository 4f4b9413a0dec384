"""The pages name who decided a question nobody answered as the code records it in `answered_by`."""

from __future__ import annotations

import re
from pathlib import Path

from agent_wait.engine.sweep import DEADLINE_ANSWERED_BY
from agent_wait.ledger.outcome import MOVED_ON

DOCS = Path(__file__).resolve().parents[2] / "docs"
RECORDED = {DEADLINE_ANSWERED_BY, MOVED_ON}


def test_every_agent_wait_answerer_a_page_names_is_one_the_code_records() -> None:
    # GIVEN every page; WHEN each `agent-wait` answerer it names after "answered by" / `answered_by` is collected
    said = re.compile(r"answered[_ ]by`?\s+`(agent-wait(?::[a-z-]+)?)`")
    named = {
        (page.name, name)
        for page in sorted(DOCS.glob("*.md"))
        for name in said.findall(page.read_text(encoding="utf-8"))
    }
    assert named, "expected the pages to name the deadline's answerer"
    # THEN each is one the ledger records
    assert {(page, name) for page, name in named if name not in RECORDED} == set()


def test_the_audit_field_table_names_the_deadlines_and_the_agents_own_answered_by() -> None:
    # GIVEN the audit page's row for `answered_by`
    [row] = [
        line
        for line in (DOCS / "audit.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `answered_by` |")
    ]
    # THEN it names what the code records for a deadline and for an agent that moved on, not another spelling
    assert f"`{DEADLINE_ANSWERED_BY}`" in row
    assert f"`{MOVED_ON}`" in row
    assert "`agent-wait` " not in row
