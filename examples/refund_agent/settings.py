"""Names the refund graph and its stack share."""

REFUND_TABLE_VARIABLE = "REFUND_TABLE"
"""The router's environment variable naming the refunds table (the stack sets it, the graph reads it)."""
