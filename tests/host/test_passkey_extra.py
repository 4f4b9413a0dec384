"""`agent_wait.host.passkeys` without `webauthn` fails on import with an error that names the extra to install."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from agent_wait import MissingExtraError


def test_importing_without_webauthn_names_the_passkey_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN webauthn hidden and the module not cached
    monkeypatch.setitem(sys.modules, "webauthn", None)
    monkeypatch.delitem(sys.modules, "agent_wait.host.passkeys", raising=False)

    # WHEN it is imported THEN the error names the package and the extra
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agent-wait[passkey]'")) as missing:
        importlib.import_module("agent_wait.host.passkeys")
    assert missing.value.extra == "passkey"
    assert missing.value.message.startswith("agent_wait.host.passkeys needs webauthn, which is not installed")
