"""Runs a command and prints, after it exits, the CPU time (user + system) each of its threads
used, summed by thread name: which of a client's threads the work went to.

    taskset -c 0 python3 benches/thread_cpu.py node benches/clients/client.mjs --variant node-sync ...

A thread's time is readable only while it lives, so /proc is read every 20 ms and each
thread's last reading is kept (a thread that lives under 20 ms may be missed).
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

# Clock ticks per second, the unit of a thread's times in /proc.
TICKS = os.sysconf("SC_CLK_TCK")


def read_thread(task: str) -> tuple[str, float] | None:
    try:
        with open(os.path.join(task, "comm")) as f:
            name = f.read().strip()
        with open(os.path.join(task, "stat")) as f:
            stat = f.read()
    except OSError:  # the thread ended meanwhile
        return None
    # Fields after the name (which ends at the last ')'): utime and stime are the 14th and
    # 15th of the line, the 12th and 13th after it.
    fields = stat[stat.rfind(")") + 2 :].split()
    return name, (int(fields[11]) + int(fields[12])) / TICKS


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: thread_cpu.py COMMAND [ARGS...]")
    child = subprocess.Popen(sys.argv[1:])
    last: dict[str, tuple[str, float]] = {}
    while child.poll() is None:
        for task in glob.glob(f"/proc/{child.pid}/task/*"):
            reading = read_thread(task)
            if reading is not None:
                last[task] = reading
        time.sleep(0.02)
    by_name: dict[str, float] = {}
    for name, seconds in last.values():
        by_name[name] = by_name.get(name, 0.0) + seconds
    for name, seconds in sorted(by_name.items(), key=lambda item: -item[1]):
        print(f"{seconds:8.2f} s  {name}")
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
