"""People: one key for a person across every door (`keys`, re-exported here) and who a question is sent to by
address (`recipients`)."""

from agent_wait.people.keys import (
    EMAIL_PRINCIPAL,
    MAX_ADDRESS_CHARS,
    address_key,
    email_address,
    person_key,
    person_keys,
    same_person,
)

__all__ = (
    "EMAIL_PRINCIPAL",
    "MAX_ADDRESS_CHARS",
    "address_key",
    "email_address",
    "person_key",
    "person_keys",
    "same_person",
)
