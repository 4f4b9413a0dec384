"""Every page the answer API serves names each element once: an `id` is unique, and every `aria-labelledby` and
`<label for>` points at an id the page has. (Two views once shared `grants-heading`: a screen reader read the wrong
heading, and the page's own script found two elements.)"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

PAGES = sorted((Path(__file__).parents[2] / "runtime" / "agent_wait" / "host" / "api" / "pages").glob("*.html"))


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: Counter[str] = Counter()
        self.references: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids[str(found["id"])] += 1
        for name in ("aria-labelledby", "aria-describedby", "aria-controls"):
            for target in (found.get(name) or "").split():
                self.references.append((name, target))
        if tag == "label" and found.get("for"):
            self.references.append(("for", str(found["for"])))


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_a_pages_ids_are_unique_and_every_reference_finds_its_element(page: Path) -> None:
    parsed = _Ids()
    parsed.feed(page.read_text(encoding="utf-8"))

    assert [name for name, count in parsed.ids.items() if count > 1] == []
    assert [(attr, target) for attr, target in parsed.references if target not in parsed.ids] == []


def test_the_pages_are_found() -> None:
    assert {"inbox.html", "confirm.html"} <= {page.name for page in PAGES}
