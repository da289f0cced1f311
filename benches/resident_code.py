"""Which crates' code a run keeps resident: runs a command, samples which pages of BINARY's
mappings are in memory (/proc/PID/pagemap, so run it as root) until the command exits, and
attributes the last sample's code pages to crates by the symbols they hold (nm).

    python3 benches/resident_code.py BINARY -- COMMAND...

For example, the Rust client at 100 sessions (mock-llm on port 18560):

    T=$CARGO_TARGET_DIR/release
    python3 benches/resident_code.py $T/compare-client -- taskset -c 0 $T/compare-client \\
        --variant rust --url http://127.0.0.1:18560/v1 --steps 10 --sessions 3000 --concurrency 100

The kernel maps code in blocks around each page a run touches (fault-around, 64 KiB by
default), so a crate can show pages it never ran because they lie next to code that did; the
totals are what counts against peak RSS either way.
"""

from __future__ import annotations

import bisect
import collections
import os
import re
import struct
import subprocess
import sys
import time

PAGE = 4096


def load_segments(binary: str) -> list[tuple[int, int, int, str]]:
    """(file offset, virtual address, file size, flags) of each LOAD segment."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    segments = []
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            flags = "".join(fields[6:-1])
            segments.append((int(fields[1], 16), int(fields[2], 16), int(fields[4], 16), flags))
    return segments


def resident_offsets(pid: int, binary: str) -> list[int]:
    """File offsets of BINARY's pages resident in process PID."""
    name = os.path.realpath(binary)
    offsets = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for line in maps:
            fields = line.split()
            if len(fields) < 6 or os.path.realpath(fields[5]) != name:
                continue
            low, high = (int(x, 16) for x in fields[0].split("-"))
            offset = int(fields[2], 16)
            for address in range(low, high, PAGE):
                pagemap.seek(address // PAGE * 8)
                (entry,) = struct.unpack("<Q", pagemap.read(8))
                if entry >> 63:  # present
                    offsets.append(address - low + offset)
    return offsets


def crate_of(symbol: str) -> str:
    """The first path segment of a demangled symbol (`<impl X for Y>` counts as X's)."""
    name = re.sub(r"^<+", "", symbol)
    name = re.sub(r"^(impl |dyn )", "", name).lstrip("&*(")
    match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", name)
    return match.group(0) if match else "?"


def main() -> None:
    if "--" not in sys.argv[2:]:
        sys.exit(__doc__)
    binary = sys.argv[1]
    command = sys.argv[sys.argv.index("--") + 1 :]
    segments = load_segments(binary)
    child = subprocess.Popen(command)
    last: list[int] = []
    while child.poll() is None:
        try:
            last = resident_offsets(child.pid, binary)
        except (FileNotFoundError, ProcessLookupError, PermissionError, OSError):
            pass  # the child exited between poll and read
        time.sleep(0.3)
    if child.returncode != 0:
        sys.exit(f"the command failed ({child.returncode})")
    nm = subprocess.run(
        ["nm", "-n", "-C", "-S", "--defined-only", binary], capture_output=True, text=True, check=True
    ).stdout
    symbols = []
    for line in nm.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[2] in "tTwW":
            symbols.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    starts = [s[0] for s in symbols]
    pages: collections.Counter[str] = collections.Counter()
    code_pages = 0
    for offset in last:
        segment = next((s for s in segments if s[0] <= offset < s[0] + s[2]), None)
        if segment is None or "E" not in segment[3]:
            pages["(data: " + (segment[3] if segment else "?") + ")"] += 1
            continue
        code_pages += 1
        address = offset - segment[0] + segment[1]
        overlap: collections.Counter[str] = collections.Counter()
        i = bisect.bisect_right(starts, address + PAGE - 1) - 1
        while i >= 0:
            start, size, name = symbols[i]
            shared = min(start + size, address + PAGE) - max(start, address)
            if shared > 0:
                overlap[crate_of(name)] += shared
            if start < address - (1 << 16):
                break  # symbols further back end before this page, unless 64 KiB long
            i -= 1
        total = sum(overlap.values())
        for crate, shared in overlap.items():
            pages[crate] += shared / total
        if not total:
            pages["(no symbol)"] += 1
    print(f"resident pages of {binary}: {len(last)} ({len(last) * PAGE / 2**20:.1f} MiB), code {code_pages}")
    for crate, count in pages.most_common(40):
        print(f"{count:8.1f}  {crate}")


if __name__ == "__main__":
    main()
