"""The durable-turn benchmark's client (run by `scripts/cluster bench`, inside the cluster's network
namespace): SESSIONS turns, each a new session whose turn is 5 tool calls and an answer against
the mock model, at most CONCURRENCY at once, each a request-response call through Restate's
ingress (`POST /AgentSession/{session}/turn`). Prints one JSON line: turns, wall seconds,
turns per second, and the p50 / p99 turn time in ms (from sending the request to the reply).
Exit status 1 when a turn did not end `done`.

usage: bench.py INGRESS_URL SESSIONS CONCURRENCY
"""

import json
import math
import sys
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

ingress, sessions, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def turn(i):
    session = str(uuid.uuid4())
    body = json.dumps({"text": "Record five notes.", "run_id": f"bench-{i}-{session[:8]}"}).encode()
    request = urllib.request.Request(f"{ingress}/AgentSession/{session}/turn", data=body, method="POST",
                                     headers={"content-type": "application/json"})
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=300) as response:
        outcome = json.loads(response.read())["outcome"]
    return (time.monotonic() - started) * 1000.0, outcome.get("status")


def quantile(values, q):
    values = sorted(values)
    return values[max(1, math.ceil(q * len(values))) - 1]


turn(-1)  # warm-up: connections, the workers' statement caches
start = time.monotonic()
with ThreadPoolExecutor(max_workers=concurrency) as pool:
    results = list(pool.map(turn, range(sessions)))
wall = time.monotonic() - start
times = [t for t, _ in results]
not_done = [s for _, s in results if s != "done"]
print(json.dumps({
    "turns": sessions, "concurrency": concurrency, "wall_s": round(wall, 2),
    "turns_per_s": round(sessions / wall, 1),
    "p50_ms": round(quantile(times, 0.5), 1), "p99_ms": round(quantile(times, 0.99), 1),
    "not_done": len(not_done),
}))
sys.exit(1 if not_done else 0)
