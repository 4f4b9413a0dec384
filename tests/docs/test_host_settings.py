"""docs/host.md's reference tables are the code's: "Settings" is `agent_wait.contract.schema.Settings` (every variable,
one row each, and "required" exactly where `HostSettings.from_env` requires it of the router, the sweep and the answer
API), and "Metrics and logs" is `agent_wait.engine.Metric`.

The pages name no other `AGENT_WAIT_*` variable than those and the CLI's and the browser tests' own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_wait.contract.schema import Settings
from agent_wait.engine import Metric
from agent_wait.errors import ConfigurationError
from agent_wait.host import HostSettings
from agent_wait.local.iam import IAM_SWITCH

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "host.md"
ROLES = ("router", "sweep", "api")
OTHER_VARIABLES = frozenset({"AGENT_WAIT_TOKEN", "AGENT_WAIT_CHROMIUM", "AGENT_WAIT_SCREENSHOTS", IAM_SWITCH})
"""Read by the CLI (`agent-wait answer`), the emulator (its IAM check's switch) and the browser tests, not by a
function."""


def _section(title: str) -> str:
    return DOC.read_text(encoding="utf-8").split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _rows() -> dict[str, dict[str, str]]:
    """The Settings table: variable -> {role: cell}."""
    section = _section("Settings")
    rows: dict[str, dict[str, str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        names = re.findall(r"`(AGENT_WAIT_[A-Z_]+)`", cells[0]) if line.startswith("|") else []
        if names:
            assert len(names) == 1, f"one variable a row: {cells[0]}"
            assert names[0] not in rows, f"{names[0]} has two rows"
            rows[names[0]] = dict(zip(ROLES, cells[1:4], strict=True))
    return rows


def test_the_table_has_one_row_for_every_setting() -> None:
    assert sorted(_rows()) == sorted(setting.value for setting in Settings)


@pytest.mark.parametrize("role", ROLES)
def test_required_is_what_from_env_requires_of_the_role(role: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        HostSettings.from_env(role, environ={})
    required = {name for name, cells in _rows().items() if cells[role] == "required"}
    assert required == set(refused.value.variables)


def test_the_pages_name_no_other_variable() -> None:
    known = {setting.value for setting in Settings} | OTHER_VARIABLES
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for name in re.findall(r"AGENT_WAIT_[A-Z_]*[A-Z]", page.read_text(encoding="utf-8")):
            # `AGENT_WAIT_SIGN_IN_*` names a family
            assert name in known or any(k.startswith(name + "_") for k in known), f"{page.name} names {name}"


def test_the_metrics_table_has_one_row_for_every_metric() -> None:
    rows = re.findall(r"^\| `(\w+)` \|", _section("Metrics and logs"), flags=re.MULTILINE)
    assert sorted(rows) == sorted(metric.value for metric in Metric)
