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


def test_the_quick_start_runs_what_init_says_to_run_next(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A reader who follows the README does what `agent-wait init` tells them next: the project's requirements
    are installed before its test or `agent-wait dev` runs."""
    from agent_wait.cli import main

    # GIVEN what init prints after writing a project
    assert main(["init", str(tmp_path / "my-agent")]) == 0
    [next_line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Next: ")]
    told = [c.split(" (", 1)[0].strip() for c in next_line.removeprefix("Next: ").split(";")]
    told = [c for c in told if c and not c.startswith("cd ")]
    # WHEN the README's quick start is read, from `agent-wait init` on
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_terminal = re.findall(r"```bash\n(.*?)```", readme.split("## Quick start", 1)[1], re.DOTALL)[0]
    commands = [line.split("  #", 1)[0].strip() for line in first_terminal.splitlines() if line.strip()]
    after_init = commands[next(i for i, c in enumerate(commands) if c.startswith("agent-wait init")) + 1 :]
    # THEN it runs every one of those commands, and installs the requirements before anything needs them
    assert [c for c in told if c not in after_init] == [], f"the quick start leaves out what init says: {after_init}"
    install = after_init.index("pip install -r requirements.txt")
    assert install < after_init.index("python -m pytest")
    assert all(install < i for i, c in enumerate(after_init) if c.startswith("agent-wait dev"))
