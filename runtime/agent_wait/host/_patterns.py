"""The shapes of values the host's settings check, shared by their `_*_settings` modules."""

from __future__ import annotations

import re

__all__ = ("LOOPBACK_URL", "SECRET_ARN")

# arn:<partition>:secretsmanager:<region>:<account>:secret:<name>-<6 random characters>
SECRET_ARN = re.compile(r"arn:[a-z][a-z0-9-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+")
"""A Secrets Manager secret ARN."""
LOOPBACK_URL = re.compile(r"http://(localhost|127\.0\.0\.1)(:\d{1,5})?(/.*)?")
"""An http:// URL on this machine: the only plain-HTTP URL a setting may name (the local fakes and issuer)."""
