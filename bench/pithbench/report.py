"""Summaries: medians, ratios, the JSON file and the Markdown table."""

from __future__ import annotations

import json
import statistics
from pathlib import Path


def summarise_side(name: str, how: str, runs: list[dict]) -> dict:
    times = [r["ms"] for r in runs if r["problem"] is None]
    rss = [r["rss_kib"] for r in runs if r["problem"] is None and r["rss_kib"]]
    problems = [r["problem"] for r in runs if r["problem"] is not None]
    out = {
        "name": name,
        "how": how,
        "ok": not problems and bool(times),
        "problem": problems[0] if problems else (None if times else "no runs"),
        "failed_runs": len(problems),
        "runs_ms": [round(r["ms"], 3) for r in runs],
        "median_ms": round(statistics.median(times), 3) if times else None,
        "min_ms": round(min(times), 3) if times else None,
        "max_ms": round(max(times), 3) if times else None,
        "peak_rss_kib": max(rss) if rss else None,
    }
    inner = [r["execute_ms"] for r in runs if r.get("execute_ms") is not None and r["problem"] is None]
    if inner:
        out["execute_median_ms"] = round(statistics.median(inner), 3)
    return out


def pair(pith: dict, peer: dict) -> dict:
    if not pith["ok"]:
        status = "FAILED: pith " + (pith["problem"] or "?")
        if not peer["ok"]:
            status += f"; {peer['name']} also failed: " + (peer["problem"] or "?")
    elif not peer["ok"]:
        status = f"PEER FAILED: {peer['name']} " + (peer["problem"] or "?")
    else:
        status = "ok"
    both = pith["ok"] and peer["ok"]
    time_ratio = round(pith["median_ms"] / peer["median_ms"], 3) if both and peer["median_ms"] else None
    rss_ratio = (round(pith["peak_rss_kib"] / peer["peak_rss_kib"], 3)
                 if both and pith["peak_rss_kib"] and peer["peak_rss_kib"] else None)
    return {"peer": peer["name"], "status": status, "time_ratio": time_ratio, "rss_ratio": rss_ratio}


def _ms(v) -> str:
    if v is None:
        return "—"
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    if v >= 10:
        return f"{v:.0f} ms"
    return f"{v:.2f} ms"


def _mib(kib) -> str:
    return "—" if not kib else f"{kib / 1024:.0f} MiB" if kib >= 10240 else f"{kib / 1024:.1f} MiB"


def _ratio(v) -> str:
    return "—" if v is None else f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def markdown(result: dict) -> str:
    meta = result["meta"]
    v = meta["versions"]
    lines = [
        f"# pith bench — {meta['mode']} run",
        "",
        f"{meta['date']} · {meta['machine']} · {meta['runs']} measured runs per side after "
        f"{meta['warmup']} warm-up, alternating · total {meta['total_s']:.0f} s",
        "",
        f"machine load (1/5/15 min) at the end: {meta.get('load', 'unknown')}",
        "",
        f"pith {v['pith']} ({v['pith_commit']})"
        + (f" · pi: Pi `@mariozechner/pi-coding-agent` {v['pi']} on Node {v['node']}" if v.get("pi") else "")
        + (f" · pi16: Pi `@earendil-works/pi-coding-agent` {v['pi16']} on Node {v['node22']}"
           if v.get("pi16") else "")
        + f" · {v['rg']} · {v['fd']}",
        "",
        "Ratios are pith / peer: below 1 means pith is faster or smaller. Time is the median wall "
        "time of the measured runs; RSS is the peak resident set of the measured process "
        "(for the Pi runner: the Node process alone, not the rg/fd/bash it spawns).",
        "",
        "| scenario | pith | pith RSS | peer | peer time | peer RSS | time ratio | RSS ratio | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in result["scenarios"]:
        if s.get("skipped"):
            continue
        pith = next(x for x in s["sides"] if x["name"] == "pith")
        for p in s["pairs"]:
            peer = next(x for x in s["sides"] if x["name"] == p["peer"])
            peer_time = _ms(peer["median_ms"])
            if peer.get("execute_median_ms") is not None:
                peer_time += f" (execute {_ms(peer['execute_median_ms'])})"
            status = p["status"].replace("|", "\\|").replace("\n", " ")
            if len(status) > 160:
                status = status[:157] + "..."
            lines.append(
                f"| **{s['name']}** {s['title']} | {_ms(pith['median_ms'])} | {_mib(pith['peak_rss_kib'])} "
                f"| {peer['name']} | {peer_time} | {_mib(peer['peak_rss_kib'])} | {_ratio(p['time_ratio'])} "
                f"| {_ratio(p['rss_ratio'])} | {status} |")
    lines += ["", "How each side was measured:", ""]
    for s in result["scenarios"]:
        if s.get("skipped"):
            continue
        hows = "; ".join(f"{x['name']}: {x['how']}" for x in s["sides"])
        note = (" — " + " ".join(s["notes"])) if s.get("notes") else ""
        lines.append(f"- **{s['name']}**: {hows}{note}")
    lines.append("")
    return "\n".join(lines)


def write(result: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "latest.json").write_text(json.dumps(result, indent=2) + "\n")
    (out_dir / "latest.md").write_text(markdown(result))
