"""pith mcp driven by the official Python MCP SDK (mcp==2.3.0) as a stdio client.

Usage: client.py PATH_TO_PITH

Checks: initialize, tools/list, a call of each of the seven tools in a temporary
workspace (offered to the server as an MCP root), details in _meta, argument errors,
progress notifications from a slow bash, and cancelling a running `sleep` (it must have
started, the call must end in cancellation, its process must be gone and the server must
answer the next call). Prints one PASS or FAIL line per check (with the server's stderr
when one failed); every tool's outputSchema and its structuredContent validated against
it (jsonschema, which the SDK depends on), a full-output resource link read back, a
duplicate in-flight request id answered with an error, and an explicit --cwd kept while
roots are offered. Then `pith mcp --remote env --cwd DIR` (the far side on this machine,
through the same local transport the Rust remote tests use): list, read, edit, bash with
progress, cancel. Exits 1 if any check failed.
"""

import asyncio
import base64
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import jsonschema
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "jobs"]
READ_ONLY = {"read", "grep", "find", "ls"}
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

failures = []


def check(name, condition, detail=""):
    # tests/mcp/run.sh and scripts/test count the PASS and FAIL lines.
    print(f"{'PASS' if condition else 'FAIL'} {name}" + ("" if condition else f": {detail}"))
    if not condition:
        failures.append(name)


def text_of(result):
    return "\n".join(part.text for part in result.content if part.type == "text")


def process_alive(marker):
    return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0


async def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


async def call_each_tool(session, work):
    result = await session.call_tool("ls", {"path": "."})
    check("ls lists the workspace offered as a root", "hello.txt" in text_of(result).splitlines(), text_of(result))

    result = await session.call_tool("read", {"path": "hello.txt"})
    check("read returns the file", not result.is_error and "hello world" in text_of(result), text_of(result))

    result = await session.call_tool("read", {"path": "pixel.png"})
    kinds = [part.type for part in result.content]
    check("read returns an image as image content", "image" in kinds, kinds)

    result = await session.call_tool("write", {"path": "out/new.txt", "content": "alpha\nbeta\n"})
    written = (work / "out/new.txt").read_text() if (work / "out/new.txt").exists() else None
    check("write creates the file", not result.is_error and written == "alpha\nbeta\n", text_of(result))

    result = await session.call_tool(
        "edit", {"path": "out/new.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}
    )
    details = (result.meta or {}).get("pith/details") or {}
    check("edit applies the change", (work / "out/new.txt").read_text() == "alpha\ngamma\n", text_of(result))
    check("edit puts the diff in _meta, not in the text",
          "gamma" in str(details.get("diff", "")) and "+2" not in text_of(result), result.meta)

    result = await session.call_tool("grep", {"pattern": "hello"})
    check("grep finds the line", "hello.txt:1:" in text_of(result), text_of(result))

    result = await session.call_tool("find", {"pattern": "*.txt"})
    check("find finds the files", "hello.txt" in text_of(result), text_of(result))

    result = await session.call_tool("bash", {"command": "echo from-bash; pwd"})
    check("bash runs in the workspace", "from-bash" in text_of(result) and str(work) in text_of(result),
          text_of(result))

    result = await session.call_tool("read", {"path": "hello.txt", "offset": "first"})
    check("bad arguments give an error result naming the field",
          result.is_error and "offset" in text_of(result), text_of(result))

    result = await session.call_tool("nope", {})
    check("an unknown tool gives an error result", result.is_error and "nope" in text_of(result), text_of(result))


async def progress_and_cancel(session, work, label=""):
    updates = []
    # Explicit synchronisation instead of sleeps: the command prints its second line only
    # after a progress notification carrying the first reached this client.
    go = work / "progress-seen"

    async def on_progress(progress, total, message):
        updates.append((progress, message))
        if message and "1" in message:
            go.touch()

    result = await session.call_tool(
        "bash", {"command": f"echo 1; until [ -e {go} ]; do sleep 0.01; done; echo 2", "timeout": 60},
        progress_callback=on_progress,
    )
    check(label + "slow bash finishes", not result.is_error and text_of(result).split() == ["1", "2"],
          text_of(result))
    counters = [progress for progress, _ in updates]
    check(label + "progress notifications arrive while bash runs", go.exists() and len(updates) >= 1, updates)
    check(label + "progress counters increase", counters == sorted(set(counters)), counters)
    check(label + "progress messages carry the output tail", any(message and "1" in message for _, message in updates),
          updates)

    # A marker unique to this run: no other process (an earlier run, a parallel one) matches it.
    marker = f"sleep 1000.{os.getpid()}{random.randrange(10**9)}"
    outcome = {}

    async def sleeping_call():
        try:
            outcome["result"] = await session.call_tool("bash", {"command": marker})
        except BaseException as error:  # noqa: BLE001 - recorded and checked below
            outcome["error"] = error
            raise

    async with anyio.create_task_group() as group:
        group.start_soon(sleeping_call)
        # Explicit synchronisation: cancel only once the sleep runs.
        started = await wait_for(lambda: process_alive(marker), 30)
        check(label + "the sleep started before the cancel", started, marker)
        # Cancelling the caller makes the SDK send notifications/cancelled for the request.
        group.cancel_scope.cancel()
    error = outcome.get("error")
    check(label + "the cancelled call ends in cancellation, with no result",
          "result" not in outcome and isinstance(error, anyio.get_cancelled_exc_class()), outcome)
    # Mutation that makes this fail: pith-mcp ignoring notifications/cancelled (not
    # cancelling the call's token) leaves the sleep running for 1000 s.
    gone = await wait_for(lambda: not process_alive(marker), 20)
    check(label + "the cancelled sleep's process is gone", gone, marker)

    result = await session.call_tool("bash", {"command": "echo still-serving"})
    check(label + "the server still answers after the cancel",
          not result.is_error and text_of(result).strip() == "still-serving", text_of(result))


async def structured_output(session, work):
    """Every tool declares an outputSchema; its structuredContent is valid against it."""
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    for name in TOOLS:
        schema = tools[name].output_schema
        check(f"{name} declares an outputSchema", isinstance(schema, dict) and schema.get("type") == "object", schema)
    calls = [
        ("read", {"path": "hello.txt"}),
        ("read", {"path": "pixel.png"}),
        ("write", {"path": "out/structured.txt", "content": "one\ntwo\n"}),
        ("edit", {"path": "out/structured.txt", "edits": [{"oldText": "two", "newText": "three"}]}),
        ("bash", {"command": "echo hi"}),
        ("grep", {"pattern": "hello"}),
        ("find", {"pattern": "*.txt"}),
        ("ls", {"path": "."}),
        ("jobs", {"action": "list"}),
    ]
    for name, args in calls:
        result = await session.call_tool(name, args)
        structured = result.structured_content
        try:
            jsonschema.validate(structured, tools[name].output_schema)
            valid, why = structured is not None, structured
        except jsonschema.ValidationError as error:
            valid, why = False, error.message
        check(f"{name} structuredContent is valid against its outputSchema", not result.is_error and valid, why)
    result = await session.call_tool("read", {"path": "hello.txt"})
    structured = result.structured_content or {}
    check("read structuredContent gives the lines shown and the total",
          (structured.get("startLine"), structured.get("endLine"), structured.get("totalLines"),
           structured.get("encoding")) == (1, 1, 1, "utf-8"), structured)
    result = await session.call_tool("bash", {"command": "exit 3"})
    check("bash structuredContent carries the exit code",
          result.is_error and (result.structured_content or {}).get("exitCode") == 3, result.structured_content)


async def resource_link_read_back(session):
    """A cut bash output links its full-output file; resources/read serves it in pages."""
    result = await session.call_tool("bash", {"command": "seq 1 200000"})
    links = [part for part in result.content if part.type == "resource_link"]
    check("a cut bash output carries a resource link", len(links) == 1, result.content)
    if not links:
        return
    structured = result.structured_content or {}
    check("the link names the fullOutputPath", str(links[0].uri).endswith(structured.get("fullOutputPath", "?")),
          (links[0].uri, structured))
    first = await session.read_resource(links[0].uri)
    text = first.contents[0].text
    check("resources/read returns the start of the full output", text.startswith("1\n2\n3\n"), text[:40])
    next_uri = (first.contents[0].meta or {}).get("pith/nextUri")
    check("a long output names its next page", bool(next_uri), first.contents[0].meta)
    pages = 1
    while next_uri and pages < 20:
        page = await session.read_resource(next_uri)
        text += page.contents[0].text
        next_uri = (page.contents[0].meta or {}).get("pith/nextUri")
        pages += 1
    expected = "".join(f"{n}\n" for n in range(1, 200001))
    check("the pages join to the whole output", pages > 1 and text == expected, (pages, len(text), len(expected)))
    try:
        await session.read_resource("file:///etc/passwd")
        check("resources/read refuses files the session did not create", False, "served /etc/passwd")
    except Exception as error:  # MCPError
        check("resources/read refuses files the session did not create", "No such resource" in str(error), error)


async def duplicate_request_id(pith, cwd):
    """A request reusing the id of one in progress is answered with a JSON-RPC error."""
    process = await asyncio.create_subprocess_exec(
        pith, "mcp", "--cwd", str(cwd), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL)
    import json
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "dup", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "bash", "arguments": {"command": "sleep 1; echo first"}}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "bash", "arguments": {"command": "echo second"}}},
    ]
    for message in messages:
        process.stdin.write((json.dumps(message) + "\n").encode())
    await process.stdin.drain()
    replies = []
    try:
        while len(replies) < 3:
            line = await asyncio.wait_for(process.stdout.readline(), 10)
            if not line:
                break
            replies.append(json.loads(line))
    except asyncio.TimeoutError:
        pass
    process.stdin.close()
    await process.wait()
    for_seven = [reply for reply in replies if reply.get("id") == 7]
    errors = [reply for reply in for_seven if "error" in reply]
    results = [reply for reply in for_seven if "result" in reply]
    check("a duplicate in-flight id gets a JSON-RPC error",
          len(errors) == 1 and "already in use" in errors[0]["error"]["message"], for_seven)
    check("the first call with that id is still answered",
          len(results) == 1 and "first" in str(results[0]["result"]["content"]), for_seven)


async def cwd_kept_with_roots(pith, work, elsewhere, errlog):
    """An explicit --cwd wins over the client's roots; the instructions say so."""
    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=work.as_uri(), name="workspace")])

    params = StdioServerParameters(command=pith, args=["mcp", "--cwd", str(elsewhere)], env=dict(os.environ))
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            init = await session.initialize()
            check("the instructions name the --cwd directory",
                  f"{elsewhere} (set with --cwd)" in (init.instructions or ""), init.instructions)
            result = await session.call_tool("bash", {"command": "pwd"})
            check("--cwd is kept when roots are offered", text_of(result).strip() == str(elsewhere), text_of(result))
            result = await session.call_tool("write", {"path": str(work / "via-root.txt"), "content": "x"})
            check("the offered root is still writable", not result.is_error, text_of(result))


async def remote_session(pith, far, errlog):
    """`pith mcp --remote env`: the tools run in a far `pith serve`, reached through `env`."""
    (far / "hello.txt").write_text("hello far\n")
    params = StdioServerParameters(
        command=pith,
        args=["mcp", "--remote", "env", "--remote-pith", pith, "--cwd", str(far)],
        env=dict(os.environ),
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = [tool.name for tool in (await session.list_tools()).tools]
            check("remote: tools/list gives the eight tools", names == TOOLS, names)
            result = await session.call_tool("read", {"path": "hello.txt"})
            check("remote: read returns the far file", not result.is_error and "hello far" in text_of(result),
                  text_of(result))
            result = await session.call_tool(
                "edit", {"path": "hello.txt", "edits": [{"oldText": "far", "newText": "there"}]}
            )
            check("remote: edit changes the far file",
                  not result.is_error and (far / "hello.txt").read_text() == "hello there\n", text_of(result))
            result = await session.call_tool("bash", {"command": "pwd"})
            check("remote: bash runs in the far --cwd", text_of(result).strip() == str(far), text_of(result))
            # Progress, cancel (the far sleep must be gone) and still serving, as locally.
            await progress_and_cancel(session, far, "remote: ")


async def history_tools(pith, tmp):
    """apply_patch and undo, on with --tools, journaled under a private XDG_STATE_HOME."""
    work = Path(tmp, "history").resolve()
    work.mkdir()
    (work / "b.txt").write_text("one\ntwo\n")
    env = dict(os.environ, XDG_STATE_HOME=str(Path(tmp, "state")))
    params = StdioServerParameters(
        command=pith, args=["mcp", "--cwd", str(work), "--tools", "read,edit,write,apply_patch,undo"], env=env
    )
    with open(Path(tmp, "history-stderr.log"), "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = [tool.name for tool in (await session.list_tools()).tools]
                check("--tools turns apply_patch and undo on", "apply_patch" in names and "undo" in names, names)
                group = {"pith/group": "turn-1"}
                patch = ("*** Begin Patch\n*** Add File: a.txt\n+added\n*** Update File: b.txt\n@@\n one\n-two\n+TWO\n"
                         "*** End Patch\n")
                result = await session.call_tool("apply_patch", {"patch": patch}, meta=group)
                details = (result.meta or {}).get("pith/details") or {}
                check("apply_patch changes both files",
                      not result.is_error and (work / "a.txt").read_text() == "added\n"
                      and (work / "b.txt").read_text() == "one\nTWO\n", text_of(result))
                check("apply_patch details carry a patch per file",
                      len(details.get("files", [])) == 2 and "+TWO" in details["files"][1].get("patch", ""), details)
                result = await session.call_tool("write", {"path": "c.txt", "content": "c\n"}, meta=group)
                check("write in the same group", not result.is_error, text_of(result))
                result = await session.call_tool("apply_patch", {"patch": "*** Begin Patch\n*** Bogus\n*** End Patch"})
                check("a malformed patch names the line", result.is_error and "patch line 2" in text_of(result),
                      text_of(result))
                result = await session.call_tool("undo", {})
                check("undo reverts the whole request group",
                      not result.is_error and not (work / "a.txt").exists() and not (work / "c.txt").exists()
                      and (work / "b.txt").read_text() == "one\ntwo\n", text_of(result))
                result = await session.call_tool("undo", {})
                check("undoing the undo redoes it",
                      not result.is_error and (work / "a.txt").exists() and (work / "c.txt").exists()
                      and (work / "b.txt").read_text() == "one\nTWO\n", text_of(result))


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_free(port):
    """Nothing listens on the port any more (a connection is refused)."""
    import socket
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


async def jobs_over_mcp(pith, work, errlog):
    """Background jobs, tty, yield, input, job-end notices and the progress heartbeat over MCP;
    every job is gone once the client closes stdin."""
    notices = []

    async def on_log(params):
        notices.append(str(params.data))

    seconds = f"1000.{os.getpid()}{random.randrange(10**9)}"
    marker = f"sleep {seconds}"
    params = StdioServerParameters(command=pith, args=["mcp", "--cwd", str(work)], env=dict(os.environ))
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            await session.initialize()
            port = free_port()
            result = await session.call_tool("bash", {
                "command": f"sleep 0.7; exec python3 -m http.server {port} --bind 127.0.0.1", "background": True})
            job = (result.structured_content or {}).get("jobId")
            check("background bash returns a job id at once", not result.is_error and job is not None,
                  text_of(result))
            result = await session.call_tool("jobs", {"action": "output", "id": job, "wait": 20,
                                                      "until": "Serving HTTP"})
            check("jobs output waits until the server says it is serving",
                  "Serving HTTP" in text_of(result), text_of(result))
            result = await session.call_tool("bash", {
                "command": f"python3 -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:{port}/\").status)'"})
            check("a second bash call fetches a page from the job", text_of(result).strip() == "200",
                  text_of(result))
            result = await session.call_tool("jobs", {"action": "kill", "id": job})
            check("jobs kill reports the job killed",
                  (result.structured_content or {}).get("state") == "killed", text_of(result))
            check("the port is free after the kill", await wait_for(lambda: port_free(port), 5), port)

            result = await session.call_tool("bash", {"command": "python3 -q", "tty": True})
            repl = (result.structured_content or {}).get("jobId")
            result = await session.call_tool("jobs", {"action": "input", "id": repl, "text": "1+1\n"})
            seen = text_of(result)
            result = await session.call_tool("jobs", {"action": "output", "id": repl, "wait": 20,
                                                      "until": "(?m)^2\\r?$"})
            seen += text_of(result)
            check("a Python REPL under tty answers 1+1 with 2", "\n2\r\n" in seen or "\n2\n" in seen, seen)
            result = await session.call_tool("jobs", {"action": "output", "id": repl, "wait": 1})
            check("the idle REPL is reported as probably waiting for input",
                  "probably waiting for input" in text_of(result), text_of(result))
            await session.call_tool("jobs", {"action": "kill", "id": repl})

            result = await session.call_tool("bash", {"command": "sleep 3; echo slept", "yield": 0.5})
            slow = (result.structured_content or {}).get("jobId")
            check("yield on a 3-second command returns a job id", slow is not None, text_of(result))
            result = await session.call_tool("jobs", {"action": "output", "id": slow, "wait": 30})
            check("jobs output with wait returns exit 0",
                  (result.structured_content or {}).get("exitCode") == 0 and "slept" in text_of(result),
                  text_of(result))

            result = await session.call_tool("bash", {
                "command": "read -r -p 'name? ' name; echo hello $name", "background": True})
            asker = (result.structured_content or {}).get("jobId")
            result = await session.call_tool("jobs", {"action": "input", "id": asker, "text": "pith\n"})
            check("input reaches a read prompt", "hello pith" in text_of(result), text_of(result))

            flag = work / f"job-{seconds}.go"
            result = await session.call_tool("bash", {
                "command": f"until [ -e {flag} ]; do sleep 0.05; done; echo finished; exit 4", "background": True})
            ender = (result.structured_content or {}).get("jobId")
            flag.touch()
            await wait_for(lambda: any(f"job {ender} " in notice for notice in notices), 10)
            check("a job that ends is announced as an MCP log message",
                  any(f"job {ender} " in n and "exited with code 4" in n for n in notices), notices)
            result = await session.call_tool("ls", {"path": "."})
            check("a job that ends is announced in the next result",
                  f"[job {ender} " in text_of(result) and "exited with code 4" in text_of(result),
                  text_of(result))

            beats = []

            async def on_progress(progress, total, message):
                beats.append(message)

            result = await session.call_tool("bash", {"command": "sleep 7"}, progress_callback=on_progress)
            check("a silent command still sends progress heartbeats with its elapsed time",
                  any(message and message.startswith("running for") for message in beats), beats)

            for index in range(5):
                await session.call_tool("bash", {
                    "command": f"setsid {marker} & nohup {marker} >/dev/null & ({marker} &); {marker}",
                    "background": True})
            check("background jobs with escaping children are running", process_alive(marker), marker)
    check("every job and its escapees are gone after stdin EOF",
          await wait_for(lambda: not process_alive(marker), 10), marker)


async def main(pith):
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp, "workspace").resolve()
        elsewhere = Path(tmp, "elsewhere").resolve()
        work.mkdir()
        elsewhere.mkdir()
        (work / "hello.txt").write_text("hello world\n")
        (work / "pixel.png").write_bytes(PNG_1X1)

        async def list_roots(context):
            return types.ListRootsResult(roots=[types.Root(uri=work.as_uri(), name="workspace")])

        # The server starts elsewhere without --cwd: the client's root must win.
        params = StdioServerParameters(command=pith, args=["mcp"], env=dict(os.environ), cwd=str(elsewhere))
        with open(Path(tmp, "server-stderr.log"), "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, list_roots_callback=list_roots) as session:
                    init = await session.initialize()
                    check("initialize names the server pith", init.server_info.name == "pith", init.server_info)

                    tools = (await session.list_tools()).tools
                    names = [tool.name for tool in tools]
                    check("tools/list gives the eight tools", names == TOOLS, names)
                    for tool in tools:
                        hints = tool.annotations
                        check(f"{tool.name} annotations",
                              hints is not None and hints.read_only_hint == (tool.name in READ_ONLY)
                              and hints.destructive_hint == (tool.name not in READ_ONLY)
                              and hints.open_world_hint is (tool.name in ("bash", "jobs")), hints)

                    await call_each_tool(session, work)
                    await progress_and_cancel(session, work)
                    await structured_output(session, work)
                    await resource_link_read_back(session)
            await jobs_over_mcp(pith, work, errlog)
            await duplicate_request_id(pith, elsewhere)
            await cwd_kept_with_roots(pith, work, elsewhere, errlog)
            far = Path(tmp, "far").resolve()
            far.mkdir()
            await remote_session(pith, far, errlog)
        await history_tools(pith, tmp)
        if failures:
            print("--- server stderr ---")
            print(Path(tmp, "server-stderr.log").read_text())

    print(f"{len(failures)} failed" if failures else "all Python SDK checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
