"""The engine's rules: the router, the sweep, the one decision path, failures and follow-ups."""
