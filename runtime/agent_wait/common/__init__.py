"""Small utilities every part uses: RFC 3339 time and the test clock (`times`), ISO 8601 durations (`durations`),
ULIDs and question ids (`ids`), and canonical JSON with the checks of what a store can hold (`canonical_json`).
Standard library only."""
