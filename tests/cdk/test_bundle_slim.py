"""A bundle per function (issue 46): each asset leaves out what only another function, or a channel the stack does not
turn on, imports, read from the installed packages' own metadata; never what the graph imports or names."""

from __future__ import annotations

from pathlib import Path

from agent_wait_cdk.bundling import slim_bundle


def _install(site: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> None:
    """A distribution as an installer leaves it: its files, and a `*.dist-info` with METADATA and RECORD."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    metadata = [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}"]
    metadata += [f"Requires-Dist: {requirement}" for requirement in requires]
    (info / "METADATA").write_text("\n".join(metadata) + "\n")
    for path, text in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text)
    record = [f"{path},sha256=x,1" for path in files] + [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n")


def _site(tmp_path: Path) -> Path:
    """A bundle with Jinja2 (and MarkupSafe, which it alone requires), a library that shares a namespace folder with
    another, the runtime and a graph."""
    site = tmp_path / "bundle"
    _install(site, "Jinja2", "3.1.6", {"jinja2/__init__.py": "", "jinja2/nodes.py": ""}, ("MarkupSafe>=2.0",
             'Babel>=2.7 ; extra == "i18n"'))  # fmt: skip
    _install(site, "MarkupSafe", "3.0.2", {"markupsafe/__init__.py": ""})
    _install(site, "slack_sdk", "3.48.0", {"slack_sdk/__init__.py": "", "slack/__init__.py": ""})
    _install(site, "langgraph", "1.2.24", {"langgraph/graph/__init__.py": ""}, ("langgraph-checkpoint",))
    _install(site, "langgraph-checkpoint", "4.3.2", {"langgraph/checkpoint/__init__.py": ""})
    (site / "jinja2" / "__pycache__").mkdir()
    (site / "jinja2" / "__pycache__" / "nodes.cpython-313.pyc").write_bytes(b"\0")
    for part in ("agent_wait/host/api/__init__.py", "agent_wait/host/router.py", "agent_wait/local/stack.py"):
        (site / part).parent.mkdir(parents=True, exist_ok=True)
        (site / part).write_text("")
    (site / "svc").mkdir()
    (site / "svc" / "graph.py").write_text("import langgraph\n")
    return site


def test_a_left_out_library_goes_with_what_only_it_requires_and_nothing_another_library_shares(tmp_path: Path) -> None:
    # GIVEN an installed bundle / WHEN the router's copy leaves out Jinja2, Slack and the API's and emulator's code
    site = _site(tmp_path)
    dropped = slim_bundle(
        site, ("jinja2", "slack-sdk", "agent_wait/host/api", "agent_wait/local"), graph_sources=["svc"]
    )
    # THEN Jinja2 is gone with its bytecode and metadata, and MarkupSafe with it (nothing else requires it)
    assert sorted(dropped) == ["agent_wait/host/api", "agent_wait/local", "jinja2", "markupsafe", "slack-sdk"]
    gone = ("jinja2", "markupsafe", "slack_sdk", "slack", "jinja2-3.1.6.dist-info", "agent_wait/host/api")
    assert [path for path in gone if (site / path).exists()] == []
    assert not (site / "agent_wait" / "local").exists()
    # AND what the router needs stays: its runtime, the graph, and a namespace folder two libraries share
    for kept in ("agent_wait/host/router.py", "svc/graph.py", "langgraph/graph/__init__.py",
                 "langgraph/checkpoint/__init__.py", "langgraph_checkpoint-4.3.2.dist-info/METADATA"):  # fmt: skip
        assert (site / kept).is_file(), kept


def test_a_library_the_graph_imports_or_its_requirements_name_is_kept(tmp_path: Path) -> None:
    # GIVEN a graph that imports Jinja2 itself, and requirements found beside it that name Slack's SDK
    site = _site(tmp_path)
    (site / "svc" / "templates.py").write_text("from jinja2 import Template\n")
    found = "slack-sdk==3.48.0\n# the agent-wait runtime's pins for what the above does not name\njinja2==3.1.6\n"
    # WHEN the router's copy is slimmed
    dropped = slim_bundle(site, ("jinja2", "slack-sdk"), graph_sources=["svc"], requirements=found)
    # THEN both stay, and what Jinja2 requires with it
    assert dropped == {}
    assert (site / "jinja2" / "nodes.py").is_file()
    assert (site / "markupsafe" / "__init__.py").is_file()
    assert (site / "slack_sdk" / "__init__.py").is_file()


def test_the_runtimes_own_pins_name_nothing_the_graph_needs(tmp_path: Path) -> None:
    # GIVEN the runtime's pins as they are (no file found beside the graph): they name Jinja2 for agent-wait itself
    site = _site(tmp_path)
    # WHEN slimmed / THEN Jinja2 goes: the pins are agent-wait's, not the graph's
    assert "jinja2" in slim_bundle(site, ("jinja2",), graph_sources=["svc"], requirements="jinja2==3.1.6\n")


def test_pywebpush_is_kept_only_by_the_router_and_the_sweep_of_a_stack_with_push() -> None:
    from agent_wait_cdk.bundling.slim import left_out

    # GIVEN a stack without push / THEN every function leaves pywebpush out (and with it what only it requires)
    assert all("pywebpush" in left_out(function) for function in ("router", "sweep", "api"))
    # GIVEN a stack with push / THEN the router and the sweep keep it; the answer API, which only keeps subscriptions,
    # still leaves it out
    assert "pywebpush" not in left_out("router", ["push"])
    assert "pywebpush" not in left_out("sweep", ["push"])
    assert "pywebpush" in left_out("api", ["push"])
