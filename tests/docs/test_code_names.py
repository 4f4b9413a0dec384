"""The pages that explain the code name only code that exists: every file, every `file::name`, every dotted name.

A file is written from the repository root, from `runtime/agent_wait/` (`engine/router.py`) or from
`constructs/agent_wait_cdk/`. A name after `::` is looked up in that file's syntax tree (`Router._start`: a method
of the class). A dotted name that starts with `agent_wait.` is imported: the longest module prefix, then each
attribute. So a move or a rename that leaves a page behind fails here, not in a reader's hands.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["architecture.md", "guarantees.md", "host.md", "cli.md", "index.md"]
"""The pages held to it (docs/constructs.md is checked by tests/cdk/test_docs.py)."""
BASES = (ROOT, ROOT / "runtime" / "agent_wait", ROOT / "constructs" / "agent_wait_cdk")

FILE = re.compile(r"`((?:[\w.-]+/)*[\w.-]+\.py)(?:::([\w.]+))?`")
DOTTED = re.compile(r"`(agent_wait(?:\.\w+)+)(?:\(\))?`")


def _references(page: str) -> list[str]:
    path = ROOT / "docs" / page
    return [m.group(0) for m in re.finditer(f"{FILE.pattern}|{DOTTED.pattern}", path.read_text(encoding="utf-8"))]


CASES = [(page, ref) for page in PAGES if (ROOT / "docs" / page).exists() for ref in dict.fromkeys(_references(page))]


def _file(name: str) -> Path | None:
    return next((base / name for base in BASES if (base / name).is_file()), None)


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _defined(body: list[ast.stmt], name: str) -> ast.stmt | None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return node
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node
    return None


def _importable(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def test_the_pages_name_code() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize(("page", "reference"), CASES, ids=[f"{p}: {r}" for p, r in CASES])
def test_a_named_file_or_name_exists(page: str, reference: str) -> None:
    file = FILE.fullmatch(reference)
    if file is None:
        dotted = DOTTED.fullmatch(reference)
        assert dotted is not None
        assert _importable(dotted.group(1)), f"{page} names {reference}, which does not import"
        return
    path = _file(file.group(1))
    assert path is not None, f"{page} names {file.group(1)}, which is not a file"
    body: list[ast.stmt] = _tree(path).body
    for name in (file.group(2) or "").split(".") if file.group(2) else ():
        node = _defined(body, name)
        assert node is not None, f"{page} names {reference}: {path.relative_to(ROOT)} defines no {name}"
        body = node.body if isinstance(node, ast.ClassDef) else []
