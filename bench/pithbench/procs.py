"""Running the measured processes: one-shot CLIs, the long-lived Pi runner, pith batch.

Wall time is, for a one-shot process, fork to wait4 as the spawn-rss helper measures it
(``time.perf_counter()`` around the whole exchange without the helper); for the long-lived
Pi runner, ``time.perf_counter()`` from writing the request to reading the answer.
Peak RSS is, for a one-shot process, ``ru_maxrss`` from ``wait4`` in spawn-rss (the process
and the children it reaped); for the long-lived Pi runner, ``VmHWM`` from
``/proc/<pid>/status`` after a garbage collection and a reset through
``/proc/<pid>/clear_refs`` before each request (the Node process only: rg/fd/bash children
that Pi spawns are not counted).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

TIMEOUT_S = 600.0  # a measured call still running after this is killed (and fails)


@dataclass
class Answer:
    """One measured call: its wall time, peak RSS and what it answered."""

    ms: float
    rss_kib: int | None
    result: dict | None = None  # {"isError", "content", "details"} for tool calls
    stdout: str = ""  # raw output of a CLI peer (rg, fd)
    error: str | None = None  # the call could not be made or its answer not parsed
    extra: dict = field(default_factory=dict)


def _wait4(proc: subprocess.Popen) -> tuple[int, int]:
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss


SPAWN_RSS: str | None = None  # the spawn-rss helper (bench/spawn_rss.c), when it could be built


def run_oneshot(argv: list[str], cwd: Path, env: dict, stdin_data: bytes | None = None,
                stop_after_lines: int | None = None, line_filter=None) -> Answer:
    """Run a process to completion, or until ``stop_after_lines`` lines passing ``line_filter``
    were read; then the pipe is closed and the process ends on SIGPIPE (Pi kills rg at its
    match limit). Started through spawn-rss, so that its peak RSS is its own."""
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile(prefix="spawn-rss-") as report:
        full = [SPAWN_RSS, report.name, *argv] if SPAWN_RSS else argv
        start = time.perf_counter()
        proc = subprocess.Popen(full, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin_data is not None
                                else subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
                                start_new_session=True)
        timer = threading.Timer(TIMEOUT_S, _kill_group, args=(proc,))
        timer.start()
        writer = None
        if stdin_data is not None:
            def feed():
                try:
                    proc.stdin.write(stdin_data)
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
        if stop_after_lines is None:
            out = proc.stdout.read()
        else:
            chunks, count = [], 0
            for line in proc.stdout:
                chunks.append(line)
                if line_filter is None or line_filter(line):
                    count += 1
                    if count >= stop_after_lines:
                        break
            out = b"".join(chunks)
        proc.stdout.close()
        code, rss = _wait4(proc)
        ms = (time.perf_counter() - start) * 1000
        timer.cancel()
        if writer:
            writer.join()
        if SPAWN_RSS:
            fields = report.read().split()
            if len(fields) == 3:
                ms, rss, code = int(fields[0]) / 1e6, int(fields[1]), int(fields[2])
            else:
                rss = None
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    text = out.decode(errors="replace")
    answer = Answer(ms, rss, stdout=text)
    answer.extra["exit"] = code
    if code not in (0, 1) and stop_after_lines is None:
        answer.error = f"exit {code}: {stderr.strip()[-400:]}"
    answer.extra["stderr"] = stderr[-2000:]
    return answer


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass


def parse_tool_json(text: str) -> dict:
    """A pith answer: ``{"content", "details", "isError"}`` (snake_case tolerated)."""
    obj = json.loads(text)
    if "isError" not in obj and "is_error" in obj:
        obj["isError"] = obj.pop("is_error")
    obj.setdefault("isError", False)
    obj.setdefault("details", None)
    return obj


def pith_call(pith: str, tool: str, args: dict, cwd: Path, env: dict, stdin: bool = False) -> Answer:
    """One ``pith call TOOL JSON --cwd DIR --json`` process (``stdin``: the JSON goes to its
    stdin instead of argv, for arguments too large for argv)."""
    if stdin:
        a = run_oneshot([pith, "call", tool, "--cwd", str(cwd), "--json"], cwd, env,
                        stdin_data=json.dumps(args).encode())
    else:
        a = run_oneshot([pith, "call", tool, json.dumps(args), "--cwd", str(cwd), "--json"], cwd, env)
    return _tool_answer(a)


def pith_batch(pith: str, requests: list[dict], cwd: Path, env: dict, flags: list[str] = ()) -> Answer:
    """One ``pith batch --cwd DIR [FLAGS]`` process fed ``requests`` (``{"id","tool","args"}``)."""
    data = "".join(json.dumps(r) + "\n" for r in requests).encode()
    a = run_oneshot([pith, "batch", "--cwd", str(cwd), *flags], cwd, env, stdin_data=data)
    if a.error and not a.stdout.strip():
        return a
    try:
        results = [parse_tool_json(line) for line in a.stdout.splitlines() if line.strip()]
    except ValueError as e:
        a.error = f"unparsable pith batch output: {e}: {a.stdout[:300]!r}"
        return a
    a.error = None
    a.extra["results"] = results
    if len(requests) == 1 and results:
        a.result = results[0]
    return a


def _tool_answer(a: Answer) -> Answer:
    if not a.stdout.strip():
        a.error = a.error or f"no output (exit {a.extra.get('exit')})"
        return a
    try:
        a.result = parse_tool_json(a.stdout)
        a.error = None
    except ValueError as e:
        a.error = f"unparsable pith output: {e}: {a.stdout[:300]!r}"
    return a


def read_hwm_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_hwm(pid: int) -> None:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pass


class PiRunner:
    """The long-lived ``node pi-runner.mjs`` process."""

    def __init__(self, script: Path, env: dict, cwd: Path, node: str = "node"):
        self.script = script
        self.env = env
        self.cwd = cwd
        self.node = node
        self.proc: subprocess.Popen | None = None
        self.next_id = 0
        self.start_ms = 0.0

    def start(self, first_request: dict | None = None) -> Answer:
        """Start Node and wait for the first answer (a ``__ping`` or ``first_request``)."""
        start = time.perf_counter()
        self.proc = subprocess.Popen([self.node, "--expose-gc", str(self.script)], cwd=self.cwd, env=self.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        req = first_request or {"tool": "__ping"}
        answer = self._exchange(req, start)
        self.start_ms = answer.ms
        return answer

    def _send(self, request: dict) -> int:
        self.next_id += 1
        line = json.dumps({**request, "id": self.next_id}) + "\n"
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        return self.next_id

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("pi-runner exited")
        return json.loads(line)

    def _exchange(self, request: dict, start: float | None = None) -> Answer:
        if start is None:
            start = time.perf_counter()
        timer = threading.Timer(TIMEOUT_S, self.proc.kill)
        timer.start()
        try:
            self._send(request)
            resp = self._read()
        except (RuntimeError, BrokenPipeError, ValueError) as e:
            self._dead()
            return Answer((time.perf_counter() - start) * 1000, None, error=str(e))
        finally:
            timer.cancel()
        ms = (time.perf_counter() - start) * 1000
        answer = Answer(ms, read_hwm_kib(self.proc.pid), result=resp)
        answer.extra["execute_ms"] = resp.get("ms")
        return answer

    def _dead(self) -> None:
        """The runner died or hung: kill it; the next call starts a new one."""
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def _alive(self) -> None:
        if self.proc is None:
            self.start()

    def _settle(self) -> None:
        """Untimed, before a measured request: collect garbage, then reset the RSS peak."""
        self._alive()
        self._exchange({"tool": "__gc"})
        reset_hwm(self.proc.pid)

    def call(self, tool: str, args: dict, cwd: Path) -> Answer:
        self._settle()
        return self._exchange({"tool": tool, "args": args, "cwd": str(cwd)})

    def batch(self, requests: list[dict], cwd: Path) -> Answer:
        """Pipeline all requests, wait for all answers (the runner answers in order)."""
        self._settle()
        start = time.perf_counter()
        data = b"".join((json.dumps({**r, "id": i, "cwd": str(cwd)}) + "\n").encode()
                        for i, r in enumerate(requests))
        def feed():
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        results = []
        try:
            for _ in requests:
                results.append(self._read())
        except (RuntimeError, ValueError) as e:
            self._dead()
            writer.join()
            return Answer((time.perf_counter() - start) * 1000, None, error=str(e))
        ms = (time.perf_counter() - start) * 1000
        writer.join()
        answer = Answer(ms, read_hwm_kib(self.proc.pid))
        answer.extra["results"] = results
        return answer

    def stop(self) -> Answer | None:
        if not self.proc:
            return None
        rss = read_hwm_kib(self.proc.pid)
        try:
            self._send({"tool": "__exit"})
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (BrokenPipeError, subprocess.TimeoutExpired, OSError):
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        return Answer(0, rss)
