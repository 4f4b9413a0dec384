"""`agent_wait.aws` without boto3 fails on import with an error that names the extra to install."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from agent_wait import MissingExtraError


def test_importing_without_boto3_names_the_aws_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN boto3 hidden and no agent_wait.aws module cached
    monkeypatch.setitem(sys.modules, "boto3", None)
    for name in [name for name in sys.modules if name == "agent_wait.aws" or name.startswith("agent_wait.aws.")]:
        monkeypatch.delitem(sys.modules, name)

    # WHEN the package is imported
    with pytest.raises(MissingExtraError, match=re.escape("pip install 'agent-wait[aws]'")) as missing:
        importlib.import_module("agent_wait.aws")

    # THEN the error is also an ImportError and says which package is missing
    assert isinstance(missing.value, ImportError)
    assert missing.value.extra == "aws"
    assert missing.value.message == (
        "agent_wait.aws needs boto3, which is not installed; install it with: pip install 'agent-wait[aws]'"
    )
