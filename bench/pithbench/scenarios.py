"""The scenarios: what each side is asked, and how its answer is checked."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import checks
from .checks import FileLines, body, cli_text, diff_sets, grep_entries, path_set, tool_text
from .corpus import Corpus
from .procs import Answer, PiRunner, pith_batch, pith_call, run_oneshot

PER_PROCESS = "per process"  # a fresh OS process per measured run, start-up included
PER_REQUEST = "per request (warm Node runner)"  # one request to an already running process


@dataclass
class Side:
    name: str  # "pith", "pi", "rg", "fd"
    how: str  # PER_PROCESS / PER_REQUEST / a sentence
    run: Callable[[], Answer]
    check: Callable[[Answer], str | None]


@dataclass
class Scenario:
    name: str
    title: str
    sides: list[Side]
    prepare: Callable[[], None] = lambda: None
    cleanup: Callable[[Answer], None] = lambda a: None
    notes: list[str] = field(default_factory=list)


@dataclass
class Ctx:
    corpus: Corpus
    pith: str | None
    pith_env: dict
    pi_env: dict
    runners: dict[str, PiRunner]  # "pi" (0.73.1) and/or "pi16" (1.6.0)
    runner_script: Path
    rg: str
    fd: str
    tmpdir: Path


def _pith_missing() -> Answer:
    return Answer(0.0, None, error="pith binary not available (build failed?)")


def _clear_tmp(ctx: Ctx, a: Answer | None = None) -> None:
    """Remove bash full-output files: everything in the bench's TMPDIR, and a reported
    ``fullOutputPath`` wherever it is (pith may not honour TMPDIR)."""
    if a is not None:
        results = [a.result] if a.result else []
        results += a.extra.get("results", [])
        for r in results:
            path = ((r or {}).get("details") or {}).get("fullOutputPath")
            if path and os.path.isfile(path):
                os.unlink(path)
    for entry in ctx.tmpdir.iterdir():
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def build(ctx: Ctx) -> list[Scenario]:
    c = ctx.corpus
    m = c.manifest
    root, tree = c.root, c.tree
    lines = FileLines(tree)

    def tool_sides(tool: str, args: dict, cwd: Path, check, stdin: bool = False) -> list[Side]:
        def run_pith() -> Answer:
            if not ctx.pith:
                return _pith_missing()
            return pith_call(ctx.pith, tool, args, cwd, ctx.pith_env, stdin=stdin)

        how = "per process (`pith call`, JSON on stdin)" if stdin else "per process (`pith call`)"
        return [Side("pith", how, run_pith, lambda a: _checked(tool_text(a), check))] + [
            Side(name, PER_REQUEST, lambda runner=runner: runner.call(tool, args, cwd),
                 lambda a: _checked(tool_text(a), check))
            for name, runner in ctx.runners.items()
        ]

    scenarios: list[Scenario] = []

    # ------------------------------------------------------------------ grep
    def check_todo(text: str) -> str | None:
        found, _ = grep_entries(body(text))
        if len(found) != 100:
            return f"{len(found)} matches, want exactly 100 (limit)"
        for entry in found:
            rel, n = entry.rsplit(":", 1)
            line = lines.line(rel, int(n))
            if line is None or "TODO" not in line:
                return f"{entry} is not a TODO line"
        return None

    limit_args = {"pattern": "TODO", "limit": 100}
    rg_base = [ctx.rg, "--line-number", "--no-heading", "--color=never", "--hidden"]
    s = Scenario("grep_limit", "grep `TODO` over the tree, stops at the 100-match limit",
                 tool_sides("grep", limit_args, tree, check_todo))
    s.sides.append(Side("rg", "per process (`rg`, killed after 100 lines, as Pi does)",
                        lambda: run_oneshot(rg_base + ["--", "TODO", "."], tree, ctx.pi_env,
                                            stop_after_lines=100),
                        lambda a: _checked(cli_text(a), check_todo)))
    s.notes.append("which 100 matches come back depends on the walk order; each side's 100 are "
                   "checked to be real TODO lines")
    scenarios.append(s)

    needles = set(m["needles"])

    def check_needles(text: str) -> str | None:
        found, ctx_lines = grep_entries(body(text))
        return diff_sets(found, needles)

    full_args = {"pattern": "needle_[0-9]+_pith", "limit": 100}
    s = Scenario("grep_full", f"grep a regex with {len(needles)} matches: a full scan of the tree",
                 tool_sides("grep", full_args, tree, check_needles))
    s.sides.append(Side("rg", "per process (`rg`)",
                        lambda: run_oneshot(rg_base + ["--", full_args["pattern"], "."], tree, ctx.pi_env),
                        lambda a: _checked(cli_text(a), check_needles)))
    scenarios.append(s)

    ctx_matches = set(m["ctx"])
    ctx_context = set()
    for entry in ctx_matches:
        rel, n = entry.rsplit(":", 1)
        for k in range(int(n) - 3, int(n) + 4):
            if k != int(n):
                ctx_context.add(f"{rel}:{k}")

    def check_ctx(text: str) -> str | None:
        found, context = grep_entries(body(text))
        return diff_sets(found, ctx_matches) or diff_sets(context, ctx_context)

    ctx_args = {"pattern": "ctxmark_[0-9]+", "context": 3, "limit": 100}
    s = Scenario("grep_context", f"grep with 3 lines of context, {len(ctx_matches)} matches, full scan",
                 tool_sides("grep", ctx_args, tree, check_ctx))
    s.sides.append(Side("rg", "per process (`rg -C 3`)",
                        lambda: run_oneshot(rg_base + ["-C", "3", "--", ctx_args["pattern"], "."],
                                            tree, ctx.pi_env),
                        lambda a: _checked(cli_text(a), check_ctx)))
    scenarios.append(s)

    # ------------------------------------------------------------------ find
    toml = set(m["toml"])

    def check_find(text: str) -> str | None:
        return diff_sets(path_set(body(text)), toml)

    find_args = {"pattern": "*.toml", "limit": 1000}
    s = Scenario("find", f"find `*.toml` ({len(toml)} of {len(m['tree_files'])} files)",
                 tool_sides("find", find_args, tree, check_find))
    s.sides.append(Side("fd", "per process (`fd --glob`)",
                        lambda: run_oneshot([ctx.fd, "--glob", "--color=never", "--hidden",
                                             "--no-require-git", "--max-results", "1000", "--",
                                             "*.toml", "."], tree, ctx.pi_env),
                        lambda a: _checked(cli_text(a), check_find)))
    scenarios.append(s)

    # ------------------------------------------------------------------ ls
    want_ls = m["ls_names"][:500]

    def check_ls(text: str) -> str | None:
        got = [x for x in body(text).split("\n") if x]
        if got == want_ls:
            return None
        for i, (g, w) in enumerate(zip(got, want_ls)):
            if g != w:
                return f"entry {i}: {g!r}, want {w!r}"
        return f"{len(got)} entries, want {len(want_ls)}"

    scenarios.append(Scenario("ls", f"ls of a {len(m['ls_names'])}-entry directory (limit 500)",
                              tool_sides("ls", {"path": "lsdir", "limit": 500}, root, check_ls)))

    # ------------------------------------------------------------------ read
    log_rel = str(c.log.relative_to(root))
    size_label = _size(m["log_bytes"])
    first_page = checks.log_page(c.log, 1)
    mid = m["log_lines"] // 2
    mid_page = checks.log_page(c.log, mid)

    def check_page(want: str):
        def check(text: str) -> str | None:
            got = body(text).rstrip("\n")
            if got == want:
                return None
            g, w = got.split("\n"), want.split("\n")
            return f"{len(g)} lines, want {len(w)}; first {g[0][:40]!r} want {w[0][:40]!r}"
        return check

    scenarios.append(Scenario("read_first", f"read the first page of the {size_label} log",
                              tool_sides("read", {"path": log_rel}, root, check_page(first_page))))
    scenarios.append(Scenario("read_middle", f"read a page in the middle (line {mid}) of the {size_label} log",
                              tool_sides("read", {"path": log_rel, "offset": mid}, root,
                                         check_page(mid_page))))

    # A page of a file Pi can read too (its read cannot hold a 1 GiB file in one string).
    src_rel = str(c.source.relative_to(root))
    original = c.source_orig.read_text()
    src_lines = original.split("\n")
    src_mid = len(src_lines) // 2
    scenarios.append(Scenario(
        "read_source", f"read a page in the middle (line {src_mid}) of the {_size(m['source_bytes'])} source file",
        tool_sides("read", {"path": src_rel, "offset": src_mid}, root,
                   check_page(checks.head_page(src_lines[src_mid - 1:]))),
        prepare=c.restore_source))

    # ------------------------------------------------------------------ edit
    items = m["source_items"]

    def item_lines(i: int, start: int, count: int) -> str:
        at = original.index(f"pub fn item_{i:06d}(")
        block = original[at:].split("\n")
        return "\n".join(block[start:start + count])

    exact_old = item_lines(items // 2, 0, 3)
    exact_new = exact_old.replace("pub fn item_", "pub fn renamed_item_") + "\n    let extra = 1;"
    exact_want = _sha(original.replace(exact_old, exact_new, 1))
    assert original.count(exact_old) == 1

    fuzzy_base = item_lines(items // 2 + 7, 0, 4)  # includes `let name = "...";`
    assert original.count(fuzzy_base) == 1 and '"' in fuzzy_base
    fuzzy_old = "\n".join(line + "   " for line in fuzzy_base.split("\n"))
    fuzzy_old = re.sub(r'"([^"]*)"', "\u201c\\1\u201d", fuzzy_old)
    fuzzy_new = fuzzy_base.replace("pub fn item_", "pub fn fuzzy_item_")
    fuzzy_want = _sha(original.replace(fuzzy_base, fuzzy_new, 1))

    def check_edit(want_sha: str):
        def check(text: str) -> str | None:
            got = checks.sha256_file(c.source)
            return None if got == want_sha else "file bytes after the edit differ from the expected"
        return check

    src_label = _size(m["source_bytes"])
    scenarios.append(Scenario(
        "edit_exact", f"exact edit (3 lines) in the middle of a {src_label} source file",
        tool_sides("edit", {"path": src_rel, "edits": [{"oldText": exact_old, "newText": exact_new}]},
                   root, check_edit(exact_want)),
        prepare=c.restore_source, cleanup=lambda a: c.restore_source()))
    scenarios.append(Scenario(
        "edit_fuzzy", f"fuzzy edit (trailing spaces, curly quotes in oldText) in the {src_label} file",
        tool_sides("edit", {"path": src_rel, "edits": [{"oldText": fuzzy_old, "newText": fuzzy_new}]},
                   root, check_edit(fuzzy_want)),
        prepare=c.restore_source, cleanup=lambda a: c.restore_source()))

    # ------------------------------------------------------------------ write
    content = c.write_content()
    content_sha = _sha(content)
    out = c.scratch / "out" / "written.txt"

    def check_write(text: str) -> str | None:
        if not out.exists():
            return "file not written"
        return None if checks.sha256_file(out) == content_sha else "written bytes differ"

    scenarios.append(Scenario(
        "write", f"write {_size(len(content))} to a new file (new directory)",
        tool_sides("write", {"path": str(out.relative_to(root)), "content": content}, root,
                   check_write, stdin=True),
        prepare=c.clean_scratch, cleanup=lambda a: c.clean_scratch(),
        notes=["pith reads the JSON arguments from stdin: a 50 MiB argument does not fit in argv"]))

    # ------------------------------------------------------------------ bash
    tail_want = checks.tail_lines(c.log, 20)

    def check_tail(text: str) -> str | None:
        got = body(text).rstrip("\n").split("\n")[-20:]
        return None if got == tail_want else f"tail {got[-1][:40]!r}, want {tail_want[-1][:40]!r}"

    scenarios.append(Scenario(
        "bash_big", f"bash `cat` of the {size_label} log (output kept to the last 50 KB)",
        tool_sides("bash", {"command": f"cat {log_rel}"}, root, check_tail),
        prepare=lambda: _clear_tmp(ctx), cleanup=lambda a: _clear_tmp(ctx, a)))

    def check_true(text: str) -> str | None:
        t = body(text).strip()
        return None if t in ("", "(no output)") else f"output {t[:60]!r}"

    scenarios.append(Scenario("bash_true", "bash `true`: the cost of starting a command",
                              tool_sides("bash", {"command": "true"}, root, check_true)))

    # ------------------------------------------------------------------ batch
    batch = c.batch_files()
    requests = [{"id": i, "tool": "read", "args": {"path": rel, "limit": 20}} for i, rel in enumerate(batch)]

    def check_batch(a: Answer) -> str | None:
        if a.error:
            return a.error
        results = a.extra.get("results") or []
        if len(results) != len(batch):
            return f"{len(results)} answers, want {len(batch)}"
        for rel, r in zip(batch, results):
            if r.get("isError"):
                return f"{rel}: tool error: {checks.text_of(r)[:200]}"
            got = checks.text_of(r).split("\n")[:20]
            want = [lines.line(rel, k) for k in range(1, 21)]
            if got != want:
                return f"{rel}: first 20 lines differ"
        return None

    def run_pith_batch() -> Answer:
        if not ctx.pith:
            return _pith_missing()
        return pith_batch(ctx.pith, requests, tree, ctx.pith_env)

    scenarios.append(Scenario(
        "batch_reads", f"{len(batch)} small reads (20 lines each) in one batch",
        [Side("pith", "one `pith batch` process (start-up included)", run_pith_batch, check_batch)] + [
            Side(name, "all requests piped into the running Node runner", lambda runner=runner: runner.batch(
                [{k: v for k, v in r.items() if k != "id"} for r in requests], tree), check_batch)
            for name, runner in ctx.runners.items()]))

    def run_pith_batch_root() -> Answer:
        if not ctx.pith:
            return _pith_missing()
        return pith_batch(ctx.pith, requests, tree, ctx.pith_env, ["--root", str(tree), "--contain-reads"])

    scenarios.append(Scenario(
        "batch_reads_root", f"the same {len(batch)} reads, pith confined (`--root TREE --contain-reads`)",
        [Side("pith", "one `pith batch --root TREE --contain-reads` process: reads through the "
                      "handle-based confined view", run_pith_batch_root, check_batch)] + [
            Side(name, "all requests piped into the running Node runner (Pi has no confinement)",
                 lambda runner=runner: runner.batch(
                     [{k: v for k, v in r.items() if k != "id"} for r in requests], tree), check_batch)
            for name, runner in ctx.runners.items()]))

    # ------------------------------------------------------------------ cold start
    small_rel = str(c.small.relative_to(root))
    small_text = c.small.read_text()

    def check_small(text: str) -> str | None:
        return None if body(text) == small_text else f"got {text[:60]!r}"

    def run_pi_cold(warm: PiRunner) -> Answer:
        runner = PiRunner(ctx.runner_script, warm.env, root, node=warm.node)
        a = runner.start({"tool": "read", "args": {"path": small_rel}, "cwd": str(root)})
        runner.stop()
        return a

    def run_pith_cold() -> Answer:
        if not ctx.pith:
            return _pith_missing()
        return pith_call(ctx.pith, "read", {"path": small_rel}, root, ctx.pith_env)

    scenarios.append(Scenario(
        "cold_start", "process start to the first answer (a read of a 3-line file)",
        [Side("pith", "per process (`pith call`)", run_pith_cold, lambda a: _checked(tool_text(a), check_small))] + [
            Side(name, "per process (`node pi-runner.mjs`, to its first answer)",
                 lambda runner=runner: run_pi_cold(runner), lambda a: _checked(tool_text(a), check_small))
            for name, runner in ctx.runners.items()]))
    return scenarios


def _checked(got: tuple[str | None, str | None], check) -> str | None:
    text, problem = got
    if problem:
        return problem
    return check(text)


def _sha(text: str) -> str:
    import hashlib
    return hashlib.sha256(text.encode()).hexdigest()


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = n / (1 << shift)
            return f"{v:.0f} {unit}" if v >= 10 or v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"
