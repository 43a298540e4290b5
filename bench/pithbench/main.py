"""bench/run: pith side by side with Pi's tools, ripgrep and fd."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

from . import peers, procs, report
from .corpus import Corpus, Params
from .procs import PiRunner
from .scenarios import Ctx, build


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run", description=__doc__)
    p.add_argument("--quick", action="store_true", help="corpora ~100x smaller: a smoke run")
    p.add_argument("--runs", type=int, default=5, help="measured runs per side (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="warm-up runs per side (default 1)")
    p.add_argument("--only", default="", help="comma-separated scenario names to run")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument("--no-build", action="store_true", help="do not run cargo build; use target/release/pith")
    p.add_argument("--pith", help="path of the pith binary to measure (implies --no-build)")
    p.add_argument("--out", default=str(peers.BENCH / "results"), help="results directory")
    p.add_argument("--timeout", type=float, default=600, help="seconds before a call is killed")
    p.add_argument("--peers", default="pi,pi16",
                   help="which Pi to run beside pith: pi (0.73.1, Node 20), pi16 (1.6.0, Node 22); default both")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    started = time.perf_counter()
    procs.TIMEOUT_S = args.timeout
    params = Params.for_mode(args.quick)
    work = peers.WORK
    tmpdir = work / "tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)

    wanted = {x.strip() for x in args.peers.split(",") if x.strip()}
    if not wanted or wanted - {"pi", "pi16"}:
        raise SystemExit(f"bench: --peers takes pi and/or pi16, not {args.peers!r}")
    node = peers.ensure_node(log) if "pi" in wanted else None
    pi_version = peers.ensure_pi(log) if "pi" in wanted else None
    pi16_version, node22 = peers.ensure_pi16(log) if "pi16" in wanted else (None, None)
    rg = peers.ensure_rg(log)
    fd = peers.ensure_fd(log)
    procs.SPAWN_RSS = peers.build_spawn_rss(log)
    if args.pith:
        pith, build_note = str(Path(args.pith).resolve()), ""
    else:
        pith, build_note = peers.build_pith(log, not args.no_build)
    log(f"peers: node {node}, pi {pi_version}, pi16 {pi16_version} on {node22}, rg {rg}, fd {fd}, "
        f"pith {pith or '(none)'}")

    corpus = Corpus(work / params.mode, params)
    t = time.perf_counter()
    if corpus.ensure(log):
        log(f"corpus generated in {time.perf_counter() - t:.0f} s")

    base_env = {k: v for k, v in os.environ.items()}
    base_env["TMPDIR"] = str(tmpdir)
    base_env["PATH"] = f"{Path(fd).parent}{os.pathsep}{base_env.get('PATH', '')}"
    pi_env = dict(base_env, PI_CODING_AGENT_DIR=str(work / "pi-agent"), PI_OFFLINE="1")
    pith_env = dict(base_env)

    script = peers.BENCH / "pi-runner.mjs"
    runners = {}
    if "pi" in wanted:
        runners["pi"] = PiRunner(script, pi_env, corpus.root)
    if "pi16" in wanted:
        runners["pi16"] = PiRunner(script, dict(pi_env, PI_RUNNER_PEER="pi16"), corpus.root, node=node22)
    for name, runner in runners.items():
        first = runner.start()
        if first.error:
            raise SystemExit(f"bench: the {name} runner did not start: {first.error}")
    ctx = Ctx(corpus, pith, pith_env, pi_env, runners, script, rg, fd, tmpdir)
    scenarios = build(ctx)
    if args.list:
        for s in scenarios:
            print(f"{s.name:14} {s.title}")
        for runner in runners.values():
            runner.stop()
        return 0
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    unknown = only - {s.name for s in scenarios}
    if unknown:
        raise SystemExit(f"bench: unknown scenario(s) {sorted(unknown)}; see --list")

    results = []
    try:
        for s in scenarios:
            if only and s.name not in only:
                continue
            results.append(run_scenario(s, args.warmup, args.runs))
    finally:
        for runner in runners.values():
            runner.stop()

    result = {
        "meta": {
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "mode": params.mode,
            "runs": args.runs,
            "warmup": args.warmup,
            "machine": f"{os.cpu_count()} cores, {_mem_gib()} GiB, Linux {platform.release()}",
            "load": _load(),
            "versions": peers.versions(rg, fd, pith),
            "build": build_note or "ok",
            "spawn_rss": bool(procs.SPAWN_RSS),
            "corpus": {
                "root": str(corpus.root),
                "tree_files": len(corpus.manifest["tree_files"]),
                "tree_bytes": corpus.manifest["tree_bytes"],
                "log_bytes": corpus.manifest["log_bytes"],
                "log_lines": corpus.manifest["log_lines"],
                "source_bytes": corpus.manifest["source_bytes"],
                "ls_entries": len(corpus.manifest["ls_names"]),
            },
            "total_s": time.perf_counter() - started,
        },
        "scenarios": results,
    }
    report.write(result, Path(args.out))
    log("")
    log(report.markdown(result))
    log(f"results: {Path(args.out) / 'latest.md'} and latest.json")
    return 0


def run_scenario(s, warmup: int, runs: int) -> dict:
    log(f"== {s.name}: {s.title}")
    records: dict[str, list[dict]] = {side.name: [] for side in s.sides}
    for i in range(warmup + runs):
        measured = i >= warmup
        for side in s.sides:  # alternate: pith, peer, [peer2], pith, peer, ...
            s.prepare()
            a = side.run()
            problem = side.check(a)
            s.cleanup(a)
            rec = {"ms": a.ms, "rss_kib": a.rss_kib, "problem": problem,
                   "execute_ms": a.extra.get("execute_ms")}
            tag = "run" if measured else "warm-up"
            log(f"  {tag} {side.name:4} {a.ms:10.1f} ms  {(a.rss_kib or 0) / 1024:8.1f} MiB"
                + (f"  WRONG: {problem}" if problem else ""))
            if measured:
                records[side.name].append(rec)
    sides = [report.summarise_side(side.name, side.how, records[side.name]) for side in s.sides]
    pith = sides[0]
    pairs = [report.pair(pith, peer) for peer in sides[1:]]
    for p in pairs:
        log(f"  pith/{p['peer']}: time {p['time_ratio']}, rss {p['rss_ratio']}  [{p['status']}]")
    return {"name": s.name, "title": s.title, "sides": sides, "pairs": pairs, "notes": s.notes}


def _load() -> str:
    """The 1, 5 and 15 minute load averages at the end of the run (the machine is shared)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _mem_gib() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / (1 << 20))
    except OSError:
        pass
    return 0
