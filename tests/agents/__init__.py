"""Small real agents (LangGraph graphs) the router loads by name in tests: `tests.agents.<module>:<factory>`."""
