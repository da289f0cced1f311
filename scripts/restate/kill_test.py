"""The replica-kill test of the durable-turn cluster (run by `scripts/cluster test`, inside the
cluster's network namespace).

Submits SESSIONS turns (one per new session; the mock model asks for 5 tool calls, then answers),
SIGKILLs one worker replica once about a third of the tool calls have run, waits for every turn,
then checks: every turn ended `done`; every tool call's side effect (a row keyed by session and
call id) exists exactly once (a tool that was running when its replica died runs again, since its
result was never journaled: the row counts that as a repeat, which is printed); every transcript has its 12 messages once, numbered 1..12, and
every tool call answered. Prints the figures. Exit status 1 when a check fails.

usage: kill_test.py INGRESS_URL PSQL PG_PORT WORKER_PID SESSIONS [DEADLINE_SECONDS]
"""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

ingress, psql, pg_port, victim, sessions = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
deadline = time.monotonic() + (float(sys.argv[6]) if len(sys.argv) > 6 else 300.0)
TOOLS = 5


def sql(query):
    out = subprocess.run(
        [psql, "-h", "127.0.0.1", "-p", pg_port, "-U", "postgres", "-At", "-F", "|", "agents", "-c", query],
        check=True, capture_output=True, text=True,
    ).stdout
    return [line.split("|") for line in out.splitlines() if line]


def post(url, body, headers=None, timeout=30):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


def submit(i):
    session = str(uuid.uuid4())
    run_id = f"kill-{i}-{session[:8]}"
    reply = post(f"{ingress}/AgentSession/{session}/turn/send", {"text": "Record five notes.", "run_id": run_id},
                 {"idempotency-key": run_id})
    return session, run_id, reply["invocationId"], time.monotonic()


def attach(item):
    session, run_id, invocation, sent = item
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return session, run_id, {"status": "timeout"}, None
        try:
            with urllib.request.urlopen(f"{ingress}/restate/invocation/{invocation}/attach",
                                        timeout=min(left, 60)) as response:
                return session, run_id, json.loads(response.read())["outcome"], time.monotonic()
        except OSError:
            time.sleep(0.2)


start = time.monotonic()
baseline = int(sql("SELECT count(*) FROM durable_effects")[0][0])
with ThreadPoolExecutor(max_workers=32) as pool:
    submitted = list(pool.map(submit, range(sessions)))
    submitted_at = time.monotonic() - start
    # Kill once about a third of the tool calls have run, so turns are mid-way on every replica.
    killed_at = None
    while time.monotonic() < deadline:
        done = int(sql("SELECT count(*) FROM durable_effects")[0][0]) - baseline
        if done >= sessions * TOOLS // 3:
            os.kill(victim, signal.SIGKILL)
            killed_at = time.monotonic() - start
            break
        time.sleep(0.05)
    results = list(pool.map(attach, submitted))
elapsed = time.monotonic() - start

failures = []
statuses = {}
for session, run_id, outcome, _ in results:
    statuses[outcome.get("status")] = statuses.get(outcome.get("status"), 0) + 1
    if outcome.get("status") != "done":
        failures.append(f"{session}: turn ended {outcome.get('status')}: {outcome.get('error')}")

ids = ",".join(f"'{s}'" for s, *_ in submitted)
effects = sql(f"SELECT session_id, count(*), max(runs), sum(runs) FROM durable_effects WHERE session_id IN ({ids}) GROUP BY 1")
by_session = {row[0]: row for row in effects}
repeats = 0
for session, *_ in submitted:
    row = by_session.get(session)
    if row is None or int(row[1]) != TOOLS:
        failures.append(f"{session}: side effects {row}: expected one row for each of {TOOLS} calls")
    if row is not None:
        repeats += int(row[3]) - int(row[1])
transcripts = sql(
    "SELECT s.id, count(*), min(m.seq), max(m.seq), count(DISTINCT m.seq),"
    " count(*) FILTER (WHERE m.role = 'tool'), count(DISTINCT m.tool_call_id) FILTER (WHERE m.role = 'tool'),"
    " count(*) FILTER (WHERE m.role = 'tool' AND NOT EXISTS (SELECT 1 FROM durable_effects e"
    "   WHERE e.session_id = s.id AND convert_to(e.call_id, 'UTF8') = m.tool_call_id))"
    f" FROM sessions s JOIN messages m ON m.session_key = s.key WHERE s.id IN ({ids}) GROUP BY s.id")
seen = {row[0]: row for row in transcripts}
want = 2 + 2 * TOOLS
for session, *_ in submitted:
    row = seen.get(session)
    expected = [session, str(want), "1", str(want), str(want), str(TOOLS), str(TOOLS), "0"]
    if row != expected:
        failures.append(f"{session}: transcript {row}, expected {expected} "
                        "(messages, first, last, distinct seqs, tool results, distinct calls, unknown calls)")

# A cancel sent through the ingress (Restate runs the shared `cancel` handler on whichever replica
# the balancer picks) stops a turn in the middle of its tool calls: the turn ends `cancelled`,
# every call it made is answered, and fewer than all five effects happened.
cancel_session = str(uuid.uuid4())
cancel_run = f"cancel-{cancel_session[:8]}"
cancel_invocation = post(f"{ingress}/AgentSession/{cancel_session}/turn/send",
                         {"text": "Record five notes.", "run_id": cancel_run}, {"idempotency-key": cancel_run})["invocationId"]
while time.monotonic() < deadline:
    if sql(f"SELECT count(*) FROM durable_effects WHERE session_id = '{cancel_session}'")[0][0] != "0":
        break
    time.sleep(0.01)
cancel_reply = post(f"{ingress}/AgentSession/{cancel_session}/cancel", {"run_id": cancel_run})
_, _, cancel_outcome, _ = attach((cancel_session, cancel_run, cancel_invocation, 0))
cancel_effects = int(sql(f"SELECT count(*) FROM durable_effects WHERE session_id = '{cancel_session}'")[0][0])
calls, results, unanswered = sql(
    "SELECT count(*) FILTER (WHERE m.role = 'assistant' AND m.tool_calls IS NOT NULL AND m.tool_calls <> '[]'),"
    " count(*) FILTER (WHERE m.role = 'tool'),"
    " count(*) FILTER (WHERE m.role = 'tool' AND m.tool_call_id IS NULL)"
    f" FROM sessions s JOIN messages m ON m.session_key = s.key WHERE s.id = '{cancel_session}'")[0]
if cancel_reply.get("invocation_id") != cancel_invocation:
    failures.append(f"cancel: reply {cancel_reply}, expected the run's invocation {cancel_invocation}")
if cancel_outcome.get("status") != "cancelled":
    failures.append(f"cancel: the turn ended {cancel_outcome.get('status')}, not cancelled")
if not 1 <= cancel_effects < TOOLS:
    failures.append(f"cancel: {cancel_effects} effects, expected the turn stopped mid-way")
if calls != results or unanswered != "0":
    failures.append(f"cancel: {calls} tool calls, {results} results: the transcript is not whole")

print(f"sessions: {sessions}, tool calls each: {TOOLS}, replicas: 3, one SIGKILLed at {killed_at and round(killed_at, 2)} s")
print(f"submitted in {submitted_at:.2f} s; all turns finished in {elapsed:.2f} s ({sessions / elapsed:.1f} turns/s)")
print(f"cancel through the ingress: the turn ended {cancel_outcome.get('status')} after {cancel_effects} of {TOOLS} "
      f"tool calls ({calls} calls, {results} results)")
print(f"outcomes: {statuses}; side-effect rows: {sum(int(r[1]) for r in effects)} (tool runs repeated because they were in flight at the kill: {repeats}); "
      f"transcripts checked: {len(seen)}")
if killed_at is None:
    failures.append("the replica was never killed: too few tool calls ran before the deadline")
for failure in failures[:20]:
    print("FAIL", failure)
if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("kill test passed")
