"""Benchmark (not a test): pith mcp over stdio with raw JSON-RPC, no SDK in the way.

Prints the cold start (spawn → initialize response → first tools/call response) and
1,000 sequential tools/call round trips of a small `read`.

Usage: python3 bench/mcp_roundtrip.py [PATH_TO_PITH] [CALLS]
  (default target/release/pith if built, else target/debug/pith; 1000 calls)
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def default_pith():
    for profile in ("release", "debug"):
        path = ROOT / "target" / profile / "pith"
        if path.exists():
            return str(path)
    sys.exit("build pith first: cargo build --release -p pith")


class Server:
    def __init__(self, pith, cwd):
        self.process = subprocess.Popen(
            [pith, "mcp", "--cwd", cwd],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.next_id = 0

    def send(self, message):
        self.process.stdin.write((json.dumps(message) + "\n").encode())

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.next_id:
                return message

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def main():
    pith = sys.argv[1] if len(sys.argv) > 1 else default_pith()
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    with tempfile.TemporaryDirectory() as work:
        Path(work, "small.txt").write_text("".join(f"line {i}\n" for i in range(20)))
        read = {"name": "read", "arguments": {"path": "small.txt"}}

        started = time.perf_counter()
        server = Server(pith, work)
        server.request("initialize", {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        })
        initialized = time.perf_counter()
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        first = server.request("tools/call", read)
        first_call = time.perf_counter()
        assert not first["result"].get("isError"), first

        latencies = []
        loop_started = time.perf_counter()
        for _ in range(calls):
            before = time.perf_counter()
            response = server.request("tools/call", read)
            latencies.append(time.perf_counter() - before)
        loop_seconds = time.perf_counter() - loop_started
        assert not response["result"].get("isError"), response
        server.close()

    latencies.sort()
    print(f"binary: {pith}")
    print(f"cold start to initialize response: {(initialized - started) * 1000:.1f} ms")
    print(f"cold start to first tools/call response: {(first_call - started) * 1000:.1f} ms")
    print(f"{calls} sequential tools/call read round trips: {loop_seconds * 1000:.0f} ms total, "
          f"{calls / loop_seconds:.0f} calls/s")
    print(f"  per call: mean {statistics.mean(latencies) * 1e6:.0f} µs, "
          f"p50 {latencies[len(latencies) // 2] * 1e6:.0f} µs, "
          f"p99 {latencies[int(len(latencies) * 0.99)] * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
