"""The pages' scripts are plain ES modules the browser loads as they are, with no build step: each stays short,
each `import` names a file its page's route serves (and names only what that file exports), the page fetches
them all at once (`modulepreload`), no script in `pages/` is left unloaded, and module scripts run under the
pages' Content-Security-Policy unchanged. Read from the files and served through `create_app`; Chromium loads
them in tests/browser/test_page_modules_in_chromium.py."""

from __future__ import annotations

import graphlib
import json
import re
import urllib.parse
from dataclasses import dataclass
from html.parser import HTMLParser
from importlib.resources import files
from typing import Any

import pytest

from agent_wait.engine import AnswerService, InMemoryEntryQueue
from agent_wait.host.api import ApiContext, create_app
from agent_wait.host.links import LinkKeys
from agent_wait.ledger import InMemoryLedger

PAGES = files("agent_wait.host.api") / "pages"
WORKER = "inbox-sw.js"
"""The inbox's service worker: a classic script the page registers (inbox-push.js), not one of its modules."""
SCRIPTS = sorted(path.name for path in PAGES.iterdir() if path.name.endswith(".js") and path.name != WORKER)
MAX_LINES = 400
"""The longest a page module may grow; past it, split it by view (docs/inbox.md)."""
LINK_KEYS = LinkKeys.parse(json.dumps({"active": "k1", "k1": "k1-secret-" + "a" * 40}))
ENTRIES = {"inbox": "/inbox", "confirm": "/questions/q-1/confirm"}
"""Each page, by the path the API serves it at."""

_IMPORT = re.compile(
    r'^import (?:\{(?P<names>[^}]*)\}|\* as (?P<namespace>\w+)) from "(?P<specifier>[^"]+)";', re.MULTILINE
)
_IMPORT_FORM = 'import { a, b } from "./x.js";'
_STATEMENT = re.compile(r"^import\b.*?;", re.MULTILINE | re.DOTALL)
_REEXPORT = re.compile(r"^export\s*(?:\*|\{[^}]*\})\s*from\b", re.MULTILINE)
_EXPORT = re.compile(r"^export (?:function|var|let|const|class) (\w+)", re.MULTILINE)


def serve(path: str) -> tuple[int, dict[str, str], str]:
    """GET `path` from the answer API's app, with answer links on (the confirmation page's routes need them)."""
    ledger = InMemoryLedger()
    context = ApiContext(
        ledger=ledger, service=AnswerService(ledger, InMemoryEntryQueue()), sign_in=None, link_keys=LINK_KEYS
    )
    event = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"host": "abc123.execute-api.eu-west-1.amazonaws.com"},
        "requestContext": {"http": {"method": "GET", "path": path}, "stage": "$default", "routeKey": "$default"},
        "isBase64Encoded": False,
    }
    raw = create_app(lambda: context).resolve(event, {})
    return raw["statusCode"], {k.lower(): v for k, v in raw["headers"].items()}, raw.get("body") or ""


@dataclass(frozen=True)
class Import:
    """One `import` statement of a module: the names it imports (`*` for a namespace), each with the name the
    module calls it by (`value as showValue`), and from which specifier."""

    names: tuple[tuple[str, str], ...]
    specifier: str


def imports_of(source: str) -> list[Import]:
    """Every import statement of `source`; a statement of any other form fails, so none goes unchecked."""
    assert not _REEXPORT.search(source), "a re-export (export ... from): import from the module that defines it"
    assert "import(" not in source, "a dynamic import(): list the module in its page instead"
    found = []
    for statement in _STATEMENT.finditer(source):
        text = statement.group(0)
        parsed = _IMPORT.match(text)
        assert parsed is not None, f"an import this test cannot read: {text!r}; write {_IMPORT_FORM}"
        if parsed.group("namespace"):
            listed: tuple[tuple[str, str], ...] = (("*", parsed.group("namespace")),)
        else:
            parts = [part.split(" as ") for part in parsed.group("names").split(",") if part.strip()]
            listed = tuple((part[0].strip(), part[-1].strip()) for part in parts)
        found.append(Import(listed, parsed.group("specifier")))
    return found


def exports_of(source: str) -> set[str]:
    """The names `source` exports (`export function name`, `export var name`, ...)."""
    return set(_EXPORT.findall(source))


class _Head(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.preloads: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "script":
            self.scripts.append(named)
        elif tag == "link" and named.get("rel") == "modulepreload":
            self.preloads.append(str(named["href"]))


def page_modules(page: str) -> tuple[str, dict[str, str], list[str]]:
    """A page's entry module's URL, every module it loads by URL (their text as served), and its preloads' URLs."""
    status, _, html = serve(ENTRIES[page])
    assert status == 200
    head = _Head()
    head.feed(html)
    assert [script.get("type") for script in head.scripts] == ["module"], "one script, a module: the others it imports"
    entry = urllib.parse.urljoin(ENTRIES[page], str(head.scripts[0]["src"]))
    loaded: dict[str, str] = {}
    waiting = [entry]
    while waiting:
        url = waiting.pop()
        if url in loaded:
            continue
        status, headers, body = serve(url)
        assert status == 200, f"{url} is not served ({status})"
        assert headers["content-type"].startswith("text/javascript"), f"{url} is not served as JavaScript"
        loaded[url] = body
        for one in imports_of(body):
            # relative to the module, in its own folder: served by the page's route, under any base path
            sibling = one.specifier.startswith("./") and "/" not in one.specifier[2:]
            assert sibling, f"{url} imports {one.specifier!r}: import a sibling file, as ./name.js"
            waiting.append(urllib.parse.urljoin(url, one.specifier))
    return entry, loaded, [urllib.parse.urljoin(ENTRIES[page], href) for href in head.preloads]


@pytest.mark.parametrize("name", SCRIPTS)
def test_no_page_module_grows_past_400_lines(name: str) -> None:
    # GIVEN one of the pages' scripts WHEN its lines are counted
    lines = (PAGES / name).read_text(encoding="utf-8").count("\n")

    # THEN it is short enough to read whole: a longer one hides a second view, to split into its own module
    assert lines <= MAX_LINES, f"pages/{name} has {lines} lines; split it by view into modules of at most {MAX_LINES}"


@pytest.mark.parametrize("page", sorted(ENTRIES))
def test_every_import_between_the_page_modules_is_a_file_the_api_serves_exporting_what_is_imported(page: str) -> None:
    # GIVEN the page's entry module and, import by import, every module it loads (as the API serves them)
    _, loaded, _ = page_modules(page)

    # THEN each is the package's file, and each import names only what its module exports
    for url, body in loaded.items():
        assert body == (PAGES / url.rsplit("/", 1)[1]).read_text(encoding="utf-8")
        for one in imports_of(body):
            target = loaded[urllib.parse.urljoin(url, one.specifier)]
            missing = {name for name, _ in one.names} - {"*"} - exports_of(target)
            assert not missing, f"{url} imports {sorted(missing)} from {one.specifier}, which does not export them"


@pytest.mark.parametrize("page", sorted(ENTRIES))
def test_the_page_fetches_every_module_it_imports_at_once(page: str) -> None:
    # GIVEN the page's modules, and the `modulepreload` links in its head
    entry, loaded, preloads = page_modules(page)

    # THEN the head preloads exactly the modules the entry imports, directly or not: the browser fetches them
    # together instead of one import level after another (a round trip each)
    assert sorted(preloads) == sorted(set(loaded) - {entry})


def test_every_script_in_pages_is_loaded_by_a_page() -> None:
    # GIVEN every module each page loads
    loaded = {url.rsplit("/", 1)[1] for page in ENTRIES for url in page_modules(page)[1]}

    # THEN no script in pages/ is left behind, unloaded
    assert sorted(loaded) == SCRIPTS


def test_the_page_modules_import_each_other_in_no_circle() -> None:
    # GIVEN which module imports which, over both pages
    loaded = [page_modules(page) for page in sorted(ENTRIES)]
    entries = {entry.rsplit("/", 1)[1] for entry, _, _ in loaded}
    imported = {
        url.rsplit("/", 1)[1]: {one.specifier[2:] for one in imports_of(body)}
        for _, modules, _ in loaded
        for url, body in modules.items()
    }

    # THEN they form layers, with each page's entry on top: in a circle, one module's code would run before the
    # module it imports is ready, and read its names while still undefined
    assert not entries & set().union(*imported.values()), "nothing imports a page's entry module"
    try:
        graphlib.TopologicalSorter(imported).prepare()
    except graphlib.CycleError as circle:
        pytest.fail(f"the page modules import in a circle: {' -> '.join(circle.args[1])}")


@pytest.mark.parametrize("page", sorted(ENTRIES))
def test_every_imported_name_is_used_by_its_module(page: str) -> None:
    # GIVEN each module the page loads, without its import statements
    for url, body in page_modules(page)[1].items():
        rest = _STATEMENT.sub("", body)
        # THEN it uses every name it imports: an unused one is a dependency left behind after a move
        for one in imports_of(body):
            unused = [local for _, local in one.names if not re.search(rf"(?<![\w.$]){re.escape(local)}\b", rest)]
            assert not unused, f"{url} imports {unused} from {one.specifier} and never uses them"


@pytest.mark.parametrize(
    ("page", "policy"),
    [
        (
            "inbox",
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; "
            "form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; "
            "trusted-types inbox-worker; manifest-src 'self'; worker-src 'self'; img-src 'self'",
        ),
        (
            "confirm",
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; "
            "form-action 'none'; frame-ancestors 'none'",
        ),
    ],
)
def test_module_scripts_run_under_the_pages_policy_unchanged(page: str, policy: str) -> None:
    # GIVEN the page WHEN it is served THEN its policy is the one its classic scripts ran under: a same-origin
    # module script and its imports need only `script-src 'self'`, and Trusted Types guards what they write
    headers: dict[str, Any] = serve(ENTRIES[page])[1]

    assert headers["content-security-policy"] == policy


def test_the_service_workers_shell_caches_every_module_the_inbox_serves() -> None:
    """The worker's `SHELL` (JavaScript) and `INBOX_MODULES` (Python) are two lists of one set: a module missing from
    the shell is not cached, so the installed inbox opened offline fails to load it (found: `inbox-passkey.js`, which
    `inbox-answer.js` imports, was served but not cached)."""
    from pathlib import Path

    from agent_wait.host.api._inbox import INBOX_MODULES

    worker = (Path(__file__).parents[2] / "runtime/agent_wait/host/api/pages/inbox-sw.js").read_text(encoding="utf-8")
    shell = re.search(r"var SHELL = \[(.*?)\]", worker, re.DOTALL)
    assert shell is not None, "inbox-sw.js defines no SHELL list"
    cached = set(re.findall(r'"([\w.-]+)"', shell.group(1)))
    assert set(INBOX_MODULES) - cached == set()
