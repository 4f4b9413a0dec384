"""pytest's default import mode names a test module by its file name alone in a folder without `__init__.py`
(the folders named after the frameworks they test, like tests/langgraph, must not be packages: they would hide
the real library). Two such files with one name stop the whole run at collection, so each name is unique."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    """The name pytest's prepend import mode gives a test file: dotted up through the packages above it."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def test_every_test_module_has_a_name_no_other_test_module_has() -> None:
    by_name: defaultdict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name.startswith("test_") or (path.name.startswith("_") and path.name != "__init__.py"):
            by_name[_module_name(path)].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"rename one file of each pair (pytest imports them under one name): {clashes}"
