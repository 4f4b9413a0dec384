"""Progress for anything that takes more than a second: a spinner on a terminal, one line otherwise."""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ("progress",)


@contextmanager
def progress(label: str, *, stream: TextIO | None = None) -> Iterator[None]:
    """Show `label…` while the block runs, then how long it took (or that it failed)."""
    out = stream or sys.stderr
    started = time.monotonic()
    done = threading.Event()
    spinner: threading.Thread | None = None
    if out.isatty():

        def spin() -> None:
            for frame in itertools.cycle("|/-\\"):
                if done.wait(0.1):
                    return
                out.write(f"\r{frame} {label}… {time.monotonic() - started:4.1f}s")
                out.flush()

        spinner = threading.Thread(target=spin, daemon=True)
        spinner.start()
    else:
        out.write(f"{label}…\n")
        out.flush()
    ok = False
    try:
        yield
        ok = True
    finally:
        done.set()
        if spinner is not None:
            spinner.join()
            out.write("\r")
        status = "done" if ok else "failed"
        out.write(f"{label}: {status} in {time.monotonic() - started:.1f}s\n")
        out.flush()
