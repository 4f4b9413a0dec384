"""docs/scaling.md: its python snippet runs, and its step tables are what that snippet computes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.docs.test_readme import run_snippets

DOC = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"


@pytest.fixture(scope="module")
def namespace() -> dict[str, Any]:
    found: dict[str, Any] = {"__name__": "scaling"}
    assert run_snippets(DOC, found) >= 1
    return found


def test_the_shared_index_key_caps_the_account_at_250_lifecycles_a_second(namespace: dict[str, Any]) -> None:
    assert namespace["CEILING"] == 250
    text = " ".join(DOC.read_text(encoding="utf-8").split())  # the page wraps its lines anywhere
    assert "about **250 lifecycles a second for the whole account**" in text


@pytest.mark.parametrize("rate", [10, 100, 1_000, 10_000])
def test_each_step_table_shows_the_computed_figures(namespace: dict[str, Any], rate: int) -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"### {rate:,} lifecycles a second", 1)[1].split("###", 1)[0]
    row = namespace["capacity"](rate)
    assert f"{row['sqs_sends_per_s']:,} sends/s" in section
    assert f"{row['question_table_wru_per_s']:,} / {row['checkpoint_table_wru_per_s']:,} WRU/s" in section
    assert f"{row['due_key_writes_per_s']:,} writes/s on `due`" in section
    assert f"{row['sns_publishes_per_s']:,}/s each" in section


@pytest.mark.parametrize("rate", [10, 100, 1_000, 10_000])
def test_each_step_costs_what_the_snippet_computes_to_two_figures(namespace: dict[str, Any], rate: int) -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"### {rate:,} lifecycles a second", 1)[1].split("###", 1)[0]
    usd = float(f"{namespace['capacity'](rate)['usd_per_month']:.2g}")
    shown = f"${usd / 1e6:.1f} million" if usd >= 1e6 else f"${usd:,.0f}"
    assert f"| cost | about {shown} a month |" in section
