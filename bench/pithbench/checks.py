"""Normalising answers so that pith, Pi, rg and fd can be compared, and checking them.

Each check returns ``None`` when the answer is right, else a one-line reason. Answers are
checked against ground truth that the corpus generator recorded (or that is cheap to compute),
so a side that differs from the truth is the one marked wrong.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .procs import Answer

NOTICE = re.compile(r"\n\n\[[^\n]*\]\s*$")
GREP_LINE = re.compile(r"^(?P<path>[^:\n]*?)(?P<sep>[:-])(?P<line>\d+)(?P=sep) ?(?P<text>.*)$")


def text_of(result: dict) -> str:
    return "".join(c.get("text", "") for c in result.get("content") or [] if c.get("type") == "text")


def body(text: str) -> str:
    """The answer without its trailing ``[...]`` notice (limits, truncation, continuation)."""
    return NOTICE.sub("", text)


def tool_text(a: Answer) -> tuple[str | None, str | None]:
    """(text, problem): the text of a successful tool answer, or why there is none."""
    if a.error:
        return None, a.error
    if a.result is None:
        return None, "no answer"
    text = text_of(a.result)
    if a.result.get("isError"):
        return None, "tool error: " + text.strip().replace("\n", " ")[:300]
    return text, None


def cli_text(a: Answer) -> tuple[str | None, str | None]:
    if a.error:
        return None, a.error
    return a.stdout, None


def grep_entries(text: str) -> tuple[set[str], set[str]]:
    """(match lines, context lines) as ``path:line`` sets; ``--`` separators ignored."""
    matches, context = set(), set()
    for line in text.split("\n"):
        m = GREP_LINE.match(line)
        if not m:
            continue
        path = m["path"].removeprefix("./")
        (matches if m["sep"] == ":" else context).add(f"{path}:{m['line']}")
    return matches, context


def path_set(text: str) -> set[str]:
    out = set()
    for line in text.split("\n"):
        line = line.strip().removeprefix("./").rstrip("/")
        if line:
            out.add(line)
    return out


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def diff_sets(got: set[str], want: set[str]) -> str | None:
    if got == want:
        return None
    missing = sorted(want - got)[:3]
    extra = sorted(got - want)[:3]
    return f"{len(got)} entries, want {len(want)}; missing {missing} extra {extra}"


class FileLines:
    """Per-file line cache for checking that a reported match really is one."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[str, list[str]] = {}

    def line(self, rel: str, n: int) -> str | None:
        lines = self.cache.get(rel)
        if lines is None:
            try:
                lines = (self.root / rel).read_text().split("\n")
            except OSError:
                lines = []
            self.cache[rel] = lines
        return lines[n - 1] if 0 < n <= len(lines) else None


def head_page(lines_iter, max_lines: int = 2000, max_bytes: int = 51200) -> str:
    """Pi's ``truncateHead``: whole lines while both limits hold, joined without a final newline."""
    kept, size = [], 0
    for line in lines_iter:
        add = len(line.encode()) + (1 if kept else 0)
        if len(kept) >= max_lines or size + add > max_bytes:
            break
        kept.append(line)
        size += add
    return "\n".join(kept)


def log_line_offset(path: Path, lineno: int) -> int:
    """Byte offset of 1-based line ``lineno`` in the generated log (lines start with
    their 0-based sequence number, 10 digits), by binary search."""
    target = lineno - 1
    size = path.stat().st_size
    with open(path, "rb") as f:
        lo, hi = 0, size
        while hi - lo > 4096:
            mid = (lo + hi) // 2
            f.seek(mid)
            f.readline()
            pos = f.tell()
            digits = f.read(10)
            if pos >= size or not digits.isdigit():
                hi = mid
                continue
            seq = int(digits)
            if seq <= target:
                lo = pos
            else:
                hi = mid
        f.seek(lo)  # a line start (or 0) by construction
        while True:
            pos = f.tell()
            line = f.readline()
            if not line:
                raise ValueError(f"line {lineno} not found")
            if int(line[:10]) == target:
                return pos


def log_page(path: Path, lineno: int) -> str:
    offset = log_line_offset(path, lineno)
    with open(path, "rb") as f:
        f.seek(offset)
        chunk = f.read(200_000).decode()
    return head_page(chunk.split("\n")[:-1])


def tail_lines(path: Path, n: int) -> list[str]:
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - 64_000))
        return f.read().decode(errors="replace").rstrip("\n").split("\n")[-n:]
