"""The manual holds together: docs/index.md links every page, README links the index, and every relative link in
README.md and docs/ reaches a file and, when it names one, a heading of that file (as GitHub makes its anchors).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _prose(path: Path) -> str:
    """The page without its fenced blocks (a `# comment` in a code block is no heading)."""
    return FENCE.sub("", path.read_text(encoding="utf-8"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (but `-` and `_`), spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    found: list[str] = []
    for heading in re.findall(r"^#{1,6} (.+)$", _prose(path), flags=re.MULTILINE):
        base = slug(heading)
        found.append(base if base not in found else f"{base}-{found.count(base)}")
    return frozenset(found)


LINKS = [
    (page, target)
    for page in PAGES
    for target in LINK.findall(_prose(page))
    if not re.match(r"[a-z]+:", target)  # http:, https:, mailto: are not ours to check
]


def test_the_index_links_every_page_and_the_readme_links_the_index() -> None:
    linked = {target.split("#")[0] for page, target in LINKS if page.name == "index.md"}
    assert sorted(p.name for p in DOCS.glob("*.md") if p.name != "index.md" and p.name not in linked) == []
    assert "docs/index.md" in {target.split("#")[0] for page, target in LINKS if page.name == "README.md"}


@pytest.mark.parametrize(("page", "target"), LINKS, ids=[f"{p.name}: {t}" for p, t in LINKS])
def test_a_relative_link_reaches_its_file_and_heading(page: Path, target: str) -> None:
    file, _, anchor = target.partition("#")
    path = (page.parent / file).resolve() if file else page
    assert path.exists(), f"{page.name} links {target}: no such file"
    if anchor and path.suffix == ".md":
        assert anchor in anchors(path), f"{page.name} links {target}: {path.name} has no heading with that anchor"
