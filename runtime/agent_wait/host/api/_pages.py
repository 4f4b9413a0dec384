"""The API's own web pages (the approvals inbox, the signed-link confirmation page): files shipped in this
package, served with headers that keep question content out of caches, Referer headers and frames."""

from __future__ import annotations

import functools
import importlib.resources

from aws_lambda_powertools.event_handler import Response

__all__ = ("OTHER_CONTENT_SECURITY_POLICY", "page_file", "read_page", "secured")

OTHER_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'"
"""For every response that is not a page: nothing in it may load or run, and it cannot be framed."""
_CONTENT_TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
}


def page_file(name: str, *, content_security_policy: str | None = None) -> Response:
    """One file of `pages/`, by its name, with the security headers (`content_security_policy` for a page)."""
    kind = _CONTENT_TYPES[name.rsplit(".", 1)[-1]]
    headers = {"Content-Security-Policy": content_security_policy} if content_security_policy else {}
    return secured(Response(status_code=200, content_type=kind, body=read_page(name), headers=headers))


@functools.cache
def read_page(name: str) -> str:
    """The text of `pages/<name>`, read once per cold start."""
    return (importlib.resources.files("agent_wait.host.api") / "pages" / name).read_text(encoding="utf-8")


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
