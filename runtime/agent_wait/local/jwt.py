"""A local JWT issuer and the checks API Gateway's JWT authorizer makes, for `agent-wait dev` and tests.

`LocalIssuer` holds an RSA key made when it starts (or the one `agent-wait dev` kept for its folder, so tokens
signed before a restart still pass: `agent_wait.local.state`), publishes it as a JWKS,
and signs RS256 tokens shaped like a Cognito ID token: `iss`, `aud`, `sub`, `email` (verified),
`cognito:groups`, `iat`, `exp`. `verify_token` checks a token the way an HTTP API's JWT authorizer
does (signature against the JWKS by `kid`, issuer, audience, expiry) and `flatten_claims` turns the
claims into the strings API Gateway hands the Lambda (`["finance", "ops"]` becomes `"[finance ops]"`).

Tokens are secrets: nothing here logs one, and errors name what was wrong, never the token.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agent_wait.errors import ArgumentError, require_extra

require_extra("the local answer API (agent-wait dev)", "jwt", "local")
require_extra("the local answer API (agent-wait dev)", "cryptography", "local")

import jwt  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from jwt.algorithms import RSAAlgorithm  # noqa: E402

__all__ = (
    "DEFAULT_AUDIENCE",
    "DEFAULT_LIFETIME",
    "MAX_LIFETIME",
    "LocalIssuer",
    "TokenRejectedError",
    "check_groups",
    "check_user",
    "flatten_claims",
    "verify_token",
)

DEFAULT_AUDIENCE = "agent-wait-local"
"""The `aud` the local issuer signs and the local authorizer expects."""
DEFAULT_LIFETIME = 3600
"""Seconds a dev sign-in token stays valid."""
MAX_LIFETIME = 86_400
"""The longest lifetime the dev sign-in grants, in seconds."""
_SUBJECTS = uuid.UUID("6f1d4c1e-2b8a-4d8e-9a43-5f0b7c2d9e11")
"""Namespace for stable local subjects: the same user always gets the same `sub`, as with a real pool."""
_GROUP = re.compile(r"[^\s\[\],]{1,128}")
"""A group name API Gateway's flattening keeps whole: no whitespace, brackets or commas."""


class TokenRejectedError(ValueError):
    """Raised by `verify_token` when a token would not pass API Gateway's JWT authorizer.

    Attributes:
        reason: what was wrong, in a few words (never the token).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def check_user(user: Any) -> str:
    """`user` when it can name a person in a token.

    Raises:
        ValueError: not a non-empty string of at most 256 printable characters.
    """
    if not isinstance(user, str) or not user.strip() or len(user) > 256 or not user.isprintable():
        raise ArgumentError(
            'user must be a non-empty string of up to 256 printable characters, e.g. "alice@example.com"'
        )
    return user.strip()


def check_groups(groups: Any) -> tuple[str, ...]:
    """`groups` as a tuple of names API Gateway can pass on intact.

    Raises:
        ValueError: not a list of names without whitespace, brackets or commas (API Gateway joins a list
            claim with spaces inside brackets, so such a name could not be read back).
    """
    if groups is None:
        return ()
    if not isinstance(groups, list | tuple) or not all(isinstance(g, str) and _GROUP.fullmatch(g) for g in groups):
        raise ArgumentError(
            'groups must be a list of names without spaces, brackets or commas, e.g. ["finance", "ops"] '
            "(API Gateway passes a list claim on as one space-separated string)"
        )
    return tuple(groups)


class LocalIssuer:
    """Signs local tokens with a key made at start, and publishes that key as a JWKS.

    Args:
        url: the issuer (`iss`); its `/.well-known/jwks.json` serves `jwks()`.
        audience: the `aud` every token carries.
        lifetime: default seconds a token stays valid.
        signing_key: (key id, PEM private key) to sign with, as `key_id` and `private_key_pem()` gave them; None
            makes a new key.

    Example:
        issuer = LocalIssuer("http://127.0.0.1:8080")
        token = issuer.token("alice@example.com", ["finance"])
        claims = verify_token(token, jwks=issuer.jwks(), issuer=issuer.url, audience=issuer.audience)
    """

    def __init__(
        self,
        url: str,
        *,
        audience: str = DEFAULT_AUDIENCE,
        lifetime: int = DEFAULT_LIFETIME,
        signing_key: tuple[str, str] | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.audience = audience
        self.lifetime = lifetime
        if signing_key is None:
            self.key_id = uuid.uuid4().hex
            self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            self.key_id, pem = signing_key
            loaded = serialization.load_pem_private_key(pem.encode("ascii"), password=None)
            if not isinstance(loaded, rsa.RSAPrivateKey):
                raise ArgumentError("signing_key must be an RSA private key in PEM (what private_key_pem() gives)")
            self._key = loaded
        public = json.loads(RSAAlgorithm.to_jwk(self._key.public_key()))
        self._jwks = {"keys": [{**public, "kid": self.key_id, "use": "sig", "alg": "RS256"}]}

    def token(
        self,
        user: str,
        groups: Sequence[str] = (),
        *,
        expires_in: float | None = None,
        issued_at: float | None = None,
        audience: str | None = None,
        nonce: str | None = None,
    ) -> str:
        """A signed RS256 token for `user` in `groups`.

        Args:
            user: the person; `email` when it looks like an address, and `cognito:username` always.
            groups: their groups (`cognito:groups`).
            expires_in: seconds from `issued_at` to `exp` (default: the issuer's lifetime).
            issued_at: `iat` as a Unix time (default: now); tests pass an old one to make an expired token.
            audience: `aud` (default: the issuer's); tests pass another to make a token for another API.
            nonce: the OIDC `nonce` the sign-in request carried, echoed in the token (an ID token's replay check).

        Raises:
            ValueError: `user` or `groups` is malformed (see `check_user`, `check_groups`).
        """
        name = check_user(user)
        names = check_groups(list(groups))
        now = int(time.time() if issued_at is None else issued_at)
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": self.audience if audience is None else audience,
            "sub": str(uuid.uuid5(_SUBJECTS, name)),
            "cognito:username": name,
            "cognito:groups": list(names),
            "token_use": "id",
            "iat": now,
            "exp": now + int(self.lifetime if expires_in is None else expires_in),
        }
        if "@" in name:  # the dev issuer vouches for the address it was given, as Cognito does once verified
            claims["email"] = name
            claims["email_verified"] = True
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self._key, algorithm="RS256", headers={"kid": self.key_id})

    def private_key_pem(self) -> str:
        """The signing key as unencrypted PKCS#8 PEM, for `agent-wait dev` to keep in its state folder."""
        return self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode("ascii")

    def jwks(self) -> dict[str, Any]:
        """The public key as a JSON Web Key Set (what `/.well-known/jwks.json` serves)."""
        return json.loads(json.dumps(self._jwks))

    def openid_configuration(self) -> dict[str, Any]:
        """The discovery document (`/.well-known/openid-configuration`) an authorizer reads the JWKS URI from."""
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}/.well-known/jwks.json",
            "id_token_signing_alg_values_supported": ["RS256"],
            "subject_types_supported": ["public"],
            "response_types_supported": ["id_token"],
            "claims_supported": [
                "iss",
                "aud",
                "sub",
                "email",
                "email_verified",
                "cognito:username",
                "cognito:groups",
                "iat",
                "exp",
            ],
        }


def verify_token(token: str, *, jwks: Mapping[str, Any], issuer: str, audience: str) -> dict[str, Any]:
    """The claims of `token` once it passes the checks API Gateway's JWT authorizer makes.

    The key is the JWKS entry named by the token's `kid`; only RS256 is accepted; `iss` must equal
    `issuer`, `aud` must hold `audience`, and `exp` must be in the future (`nbf`, when present, past).

    Raises:
        TokenRejectedError: with what was wrong (never the token itself).
    """
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        raise TokenRejectedError("the bearer token is not a JWT") from None
    if header.get("alg") != "RS256":
        raise TokenRejectedError("the token must be signed with RS256")
    try:
        key = jwt.PyJWKSet.from_dict(dict(jwks))[str(header.get("kid"))]
    except (KeyError, jwt.PyJWKSetError):
        raise TokenRejectedError("the token's key id is not in the issuer's JWKS") from None
    try:
        return jwt.decode(
            token,
            key.key,
            algorithms=["RS256"],
            audience=audience,
            issuer=issuer,
            options={"require": ["iss", "aud", "sub", "iat", "exp"]},
        )
    except jwt.ExpiredSignatureError:
        raise TokenRejectedError("the token has expired") from None
    except jwt.InvalidAudienceError:
        raise TokenRejectedError("the token is for another audience") from None
    except jwt.InvalidIssuerError:
        raise TokenRejectedError("the token is from another issuer") from None
    except jwt.InvalidSignatureError:
        raise TokenRejectedError("the token's signature does not verify") from None
    except jwt.MissingRequiredClaimError as exc:
        raise TokenRejectedError(f"the token has no {exc.claim} claim") from None
    except jwt.InvalidTokenError as exc:
        raise TokenRejectedError(f"the token is not valid ({type(exc).__name__})") from None


def flatten_claims(claims: Mapping[str, Any]) -> dict[str, str]:
    """Claims as API Gateway's JWT authorizer passes them to the Lambda: every value a string.

    A list becomes its items joined by spaces inside brackets (`"[finance ops]"`), a number its digits,
    a boolean `true`/`false`, an object its JSON.
    """
    flat: dict[str, str] = {}
    for name, value in claims.items():
        if isinstance(value, list | tuple):
            flat[name] = "[" + " ".join(str(item) for item in value) + "]"
        elif isinstance(value, bool):
            flat[name] = "true" if value else "false"
        elif isinstance(value, dict):
            flat[name] = json.dumps(value, separators=(",", ":"))
        else:
            flat[name] = str(value)
    return flat
