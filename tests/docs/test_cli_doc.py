"""docs/cli.md documents the console script as its parser defines it: every command, and every option of each.

The commands and options are read from `agent-wait --help` and `agent-wait COMMAND --help` (what a person sees),
so a new command or option without a word in the page fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_wait.cli import main

DOC = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
STACK_OPTIONS = frozenset({"--stack", "--outputs", "--region", "--profile", "--endpoint-url"})
"""The options that find the stack, documented once, in "Which stack"."""


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def _commands(capsys: pytest.CaptureFixture[str]) -> list[str]:
    choices = re.search(r"\{([a-z,-]+)\}", _help(capsys))
    assert choices is not None
    return choices.group(1).split(",")


def _section(title: str) -> str:
    return DOC.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_every_command_has_its_section(capsys: pytest.CaptureFixture[str]) -> None:
    commands = _commands(capsys)
    assert len(commands) == 16
    for command in commands:
        assert f"\n## `{command}`\n" in DOC, f"docs/cli.md has no section for `agent-wait {command}`"
        assert f"agent-wait {command}" in DOC.split("\n## ", 1)[0], f"the summary at the top leaves out {command}"


def test_every_option_is_documented_where_its_command_is(capsys: pytest.CaptureFixture[str]) -> None:
    for command in _commands(capsys):
        options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", _help(capsys, command))) - {"--help"}
        section = _section(f"`{command}`")
        missing = sorted(o for o in options - STACK_OPTIONS if o not in section)
        assert missing == [], f"docs/cli.md, `{command}`, leaves out {missing}"
        if options & STACK_OPTIONS:
            assert all(o in _section("Which stack") for o in STACK_OPTIONS)


def test_every_help_page_has_a_description_and_states_its_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    """`agent-wait COMMAND --help` says what the command is for, and every option that takes a value says what
    happens without it (a flag is off unless given; a required option has no default)."""
    import argparse

    from agent_wait.cli._parser import build_parser

    [subparsers] = [a for a in build_parser("")._actions if isinstance(a, argparse._SubParsersAction)]
    for command in _commands(capsys):
        required = {o for a in subparsers.choices[command]._actions if a.required for o in a.option_strings}
        page = _help(capsys, command)
        description = page.split("\n\n", 2)[1]  # after the usage, before the first group of arguments
        assert description.strip(), f"`agent-wait {command} --help` has no description line"
        assert not description.lstrip().startswith(("positional", "options")), (
            f"`agent-wait {command} --help` has no description line"
        )
        # Each option's entry, in any group: from its name to the next entry (argparse wraps long helps).
        entries = re.split(r"\n(?=  -)", page.split("\n\n", 2)[2])[1:]
        for entry in entries:
            names = entry.strip().split("  ", 1)[0]
            takes_value = bool(re.search(r"--[a-z-]+ [A-Z{]", names))
            if not takes_value or names.split()[0].rstrip(",") in required:
                continue
            text = " ".join(entry.split())
            assert "default" in text, f"`agent-wait {command} --help`: {names} states no default"
