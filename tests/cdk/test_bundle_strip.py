"""Compiled libraries ship without their debug sections: smaller bundles, the same imports."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import zstandard

from agent_wait_cdk.bundling.prune import strip_debug_sections


def _unstripped_library() -> Path:
    # zstandard's wheel for this interpreter ships its C extension with debug sections (11.6 MB; 1.0 MB stripped).
    found = sorted(Path(zstandard.__file__).parent.glob("backend_c*.so"))
    if not found or not _has_debug_sections(found[0]):
        pytest.skip("this zstandard wheel has no debug sections to strip")
    return found[0]


def _has_debug_sections(library: Path) -> bool:
    listed = subprocess.run(["readelf", "-S", "--wide", str(library)], capture_output=True, text=True, check=False)
    return any(" .debug_" in line for line in listed.stdout.splitlines())


def test_a_library_loses_its_debug_sections_and_still_imports(tmp_path: Path) -> None:
    if shutil.which("strip") is None or shutil.which("readelf") is None:
        pytest.skip("binutils (strip, readelf) is not on PATH")
    # GIVEN an unstripped extension module copied into a bundle folder
    library = _unstripped_library()
    copy = tmp_path / "zstandard" / library.name
    copy.parent.mkdir()
    shutil.copy2(library, copy)

    # WHEN the bundle is stripped
    saved = strip_debug_sections(tmp_path)

    # THEN it is smaller by what was saved, has no debug section left, and still loads as a module
    assert saved > 0
    assert copy.stat().st_size == library.stat().st_size - saved
    assert not _has_debug_sections(copy)
    spec = importlib.util.spec_from_file_location("zstandard.backend_c", copy)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert hasattr(module, "ZstdCompressor")


def test_a_file_strip_cannot_read_is_left_as_it_is(tmp_path: Path) -> None:
    not_elf = tmp_path / "pkg" / "fake.so"
    not_elf.parent.mkdir()
    not_elf.write_bytes(b"not a shared library")
    assert strip_debug_sections(tmp_path) == 0
    assert not_elf.read_bytes() == b"not a shared library"


def test_a_hard_linked_library_is_replaced_never_written_in_place(tmp_path: Path) -> None:
    # uv installs the bundle by hard-linking from its cache: the same file is loaded by other environments
    # (this test run's own, in CI), so stripping must leave the original file untouched.
    if shutil.which("strip") is None or shutil.which("readelf") is None:
        pytest.skip("binutils (strip, readelf) is not on PATH")
    library = _unstripped_library()
    cache = tmp_path / "cache" / library.name
    cache.parent.mkdir()
    shutil.copy2(library, cache)
    bundled = tmp_path / "bundle" / "zstandard" / library.name
    bundled.parent.mkdir(parents=True)
    os.link(cache, bundled)
    before = cache.read_bytes()

    strip_debug_sections(tmp_path / "bundle")

    assert cache.read_bytes() == before
    assert cache.stat().st_nlink == 1
    assert not _has_debug_sections(bundled)
