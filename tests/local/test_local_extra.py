"""Without the emulator installed, `agent-wait dev` and `demo` say which extra brings it, in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_wait.cli import main


@pytest.mark.parametrize(("command", "missing"), [("dev", "moto"), ("dev", "flask"), ("dev", "jwt"), ("demo", "moto")])
def test_dev_and_demo_without_the_local_extra_name_it(
    command: str,
    missing: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN a pip install without the emulator (the import of `missing` fails)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, missing, None)
    # WHEN agent-wait dev starts
    assert main([command]) == 1
    # THEN one line says what to install, and nothing is left behind
    err = capsys.readouterr().err
    assert f"needs {missing}, which is not installed; install it with: pip install 'agent-wait[local]'" in err
    assert err.count("\n") == 1
    assert not (tmp_path / ".agent-wait").exists()
