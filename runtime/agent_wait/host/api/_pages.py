"""The API's own web pages (the approvals inbox, the signed-link confirmation page): files shipped in this
package, served with headers that keep question content out of caches, Referer headers and frames."""

from __future__ import annotations

import functools
import importlib.resources

from aws_lambda_powertools.event_handler import Response

__all__ = ("OTHER_CONTENT_SECURITY_POLICY", "page_file", "read_page", "read_page_bytes", "secured")

OTHER_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'"
"""For every response that is not a page: nothing in it may load or run, and it cannot be framed."""
_CONTENT_TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
    "webmanifest": "application/manifest+json; charset=utf-8",
    "png": "image/png",
}
_BINARY = frozenset({"png"})


def page_file(
    name: str, *, content_security_policy: str | None = None, headers: dict[str, str] | None = None
) -> Response:
    """One file of `pages/`, by its name, with the security headers (`content_security_policy` for a page or a
    worker) and any `headers` besides; an image as bytes (API Gateway gets it base64-encoded)."""
    extension = name.rsplit(".", 1)[-1]
    kind = _CONTENT_TYPES[extension]
    headers = dict(headers or {})
    if content_security_policy:
        headers["Content-Security-Policy"] = content_security_policy
    body: str | bytes = read_page_bytes(name) if extension in _BINARY else read_page(name)
    return secured(Response(status_code=200, content_type=kind, body=body, headers=headers))


@functools.cache
def read_page(name: str) -> str:
    """The text of `pages/<name>`, read once per cold start."""
    return (importlib.resources.files("agent_wait.host.api") / "pages" / name).read_text(encoding="utf-8")


@functools.cache
def read_page_bytes(name: str) -> bytes:
    """The bytes of `pages/<name>` (an image), read once per cold start."""
    return (importlib.resources.files("agent_wait.host.api") / "pages" / name).read_bytes()


def secured(response: Response) -> Response:
    """No caching, no Referer, no sniffing, no framing, on every page response (they may hold question content)."""
    response.headers.setdefault("Content-Security-Policy", OTHER_CONTENT_SECURITY_POLICY)
    response.headers.update(
        {
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
        }
    )
    return response
