"""README.md and the docs stay true to the code: every python snippet runs, and the two commands exist."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = re.compile(r"```python\n(.*?)```", re.DOTALL)


def run_snippets(path: Path, namespace: dict[str, Any] | None = None) -> int:
    """Run every python snippet of `path` in order in one namespace; returns how many ran."""
    namespace = namespace if namespace is not None else {"__name__": path.stem}
    snippets = SNIPPET.findall(path.read_text(encoding="utf-8"))
    for number, code in enumerate(snippets, start=1):
        try:
            exec(compile(code, f"{path.name}: snippet {number}", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"snippet {number} of {path.name} failed: {exc!r}\n{code}") from exc
    return len(snippets)


def test_every_python_snippet_in_the_readme_runs() -> None:
    assert run_snippets(ROOT / "README.md") >= 2, "expected the README's python snippets"


@pytest.mark.parametrize("command", ["scripts/dev demo", "scripts/dev test"])
def test_the_readme_gives_the_two_commands_and_they_exist(command: str) -> None:
    # GIVEN the README's setup section / THEN each command is there and its script handles it
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert command in readme, f"README must give `{command}`"
    script = (ROOT / "scripts" / "dev").read_text(encoding="utf-8")
    assert f"  {command.split()[1]})" in script, f"scripts/dev must handle {command.split()[1]!r}"


def test_ci_runs_the_readme_test_command() -> None:
    assert "scripts/dev test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_python_snippet_in_the_message_formats_doc_runs() -> None:
    assert run_snippets(ROOT / "docs" / "message-formats.md") >= 1


def test_every_python_snippet_in_the_host_doc_runs() -> None:
    assert run_snippets(ROOT / "docs" / "host.md") >= 2


def test_every_python_snippet_in_the_answering_doc_runs() -> None:
    assert run_snippets(ROOT / "docs" / "answering.md") >= 2


def test_every_python_snippet_in_the_policies_doc_runs() -> None:
    assert run_snippets(ROOT / "docs" / "policies.md") >= 8
