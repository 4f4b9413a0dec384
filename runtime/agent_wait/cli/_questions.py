"""How `agent-wait questions` prints: a line per question (`question_line`) and one question whole (`show`)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from agent_wait.cli import _commands
from agent_wait.cli._commands import clipped
from agent_wait.cli._target import CliError

__all__ = ("question_line", "show")


def question_line(row: dict[str, Any]) -> str:
    """One question of `agent-wait questions`: its outcome (`open` until decided), then, once decided, what the
    agent did (`agent=`) and who decided it in that outcome's words: `by= via=` for an answer, `cancelled_by=` and
    `reason=` for a cancel, the default for an expiry, nothing more for a withdrawn question."""
    outcome = row.get("outcome")
    decided = ""
    if outcome:
        decided = f"  agent={row.get('agent')}"
    if outcome == "answered":
        decided += f"  by={row.get('answered_by')} via={row.get('via')}"
    elif outcome == "cancelled":
        decided += f"  cancelled_by={row.get('answered_by')} reason={json.dumps(row.get('reason') or '')}"
    elif outcome == "expired":
        decided += "  default applied"
    return (
        f"{outcome or row['status']:9} {row['question_id']}  thread={row['thread_id']}"
        f"  expires={row.get('expires_at')}  actions={'/'.join(row.get('allowed_actions') or [])}"
        + decided
        + f"  asks={clipped(row['asks'])}"
    )


def show(target: Any, args: argparse.Namespace) -> int:
    if len(args.show) != 2 or args.show[0] != "show":
        raise CliError("questions takes no words but `show QUESTION`: agent-wait questions show QUESTION_ID")
    view = _commands.show(target, args.show[1])
    if args.json:
        print(json.dumps(view, indent=2, sort_keys=True))
        return 0
    policy, outcome = view["policy"], view["outcome"]
    lines = [
        f"question {view['question_id']}  thread={view['thread_id']}  status={view['status']}",
        f"asked    {view['asked_at']}",
        f"asks     {json.dumps(view['question'], sort_keys=True)}",
        f"actions  {'/'.join(policy['allowed_actions'])}   deadline {policy['expires_at'] or 'none'}",
        f"default  {json.dumps(policy['default'], sort_keys=True)}",
        f"rules    {json.dumps(policy['rules'], sort_keys=True)}   tags {json.dumps(policy['tags'], sort_keys=True)}",
    ]
    if outcome is None:
        lines.append("decision none yet")
    elif outcome["expired"]:
        lines.append(f"decision the deadline passed at {outcome['decided_at']}: the default applied, nobody decided")
    elif outcome["status"] == "withdrawn":
        lines.append(f"decision withdrawn at {outcome['decided_at']}: the agent moved on without an answer")
    else:
        lines.append(
            f"decision {outcome['status']} by {outcome['answered_by']} via {outcome['via']} at {outcome['decided_at']}"
        )
        lines.append(f"answer   {json.dumps(outcome['answer'], sort_keys=True)}")
        if outcome.get("reason"):  # a person's cancel says why
            lines.append(f"reason   {outcome['reason']}")
    if outcome is not None:
        lines.append(f"agent    {outcome['agent']}")
    if view.get("failure"):
        lines.append(f"failed   {view['failure']['error']} at {view['failure']['failed_at']}; see agent-wait failures")
    if refusal := view.get("last_refusal"):  # the queue answers its sender nothing: the row says why
        by = f" from {refusal['by']}" if refusal.get("by") else ""
        lines.append(f"refused  {refusal['reason']} at {refusal['at']}{by}: {refusal['detail']}")
    print("\n".join(lines))
    return 0
