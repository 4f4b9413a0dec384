"""Names the refund graph and its stack share."""

REFUND_TABLE_VARIABLE = "REFUND_TABLE"
"""The router's environment variable naming the refunds table (the stack sets it, the graph reads it)."""

REFUND_ROUTER_MEMORY_MB = 320
"""The refund router's Lambda memory: the cheapest size on its measured cost curve that stays cheap whether AWS
answers fast or slowly (`bench/bench_router_memory.py`: $1.52 a million lifecycles as moto answers on loopback,
$1.79 with a modelled AWS round trip on each call, against $1.29 and $2.58 at the library's 512 MB default). Its
price is a longer cold start: about 5.4 s against 3.1 s at 512 MB (`bench/bench_cold_start.py --memory`), paid
on the first message after idle by a graph whose three nodes do no work of their own. A graph that calls a model
or loads a heavy SDK measures its own curve (docs/scaling.md, "The router's memory")."""
