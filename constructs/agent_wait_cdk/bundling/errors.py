"""The one error the bundler raises."""

from __future__ import annotations

__all__ = ("BundleError",)


class BundleError(RuntimeError):
    """Raised when the Lambda bundle cannot be planned (a missing source) or built (the installer failed)."""
