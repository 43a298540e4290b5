"""Corpora for the bench, generated from a fixed seed and reused across runs.

Everything lands in ``bench/work/<mode>/`` (``full`` or ``quick``). A ``stamp.json`` records
the generator version and the parameters; when it matches, the corpus is reused as is.

The corpora are chosen so that Pi's documented quirks cannot change an answer (see
bench/README.md, "Same answer"):

* plain ASCII, no trailing whitespace, no tabs, no curly quotes: fuzzy normalisation of a
  whole file (what Pi 0.73 does) is a no-op;
* no ``.gitignore``, no hidden files, no symlinks: Pi's grep (rg outside a git repository
  ignores ``.gitignore``) and Pi's find (fd honours it everywhere) see the same files as pith;
* grep needles never sit within 4 lines of either end of a file, so context windows never
  reach Pi's phantom empty line after the final newline;
* file and directory names are ``[a-z0-9_.]`` of uniform shape, so every sane collation
  (ICU ``localeCompare``, bytewise) gives the same ``ls`` order;
* every line is shorter than 500 characters (no grep line clipping).
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

GENERATOR_VERSION = 3
SEED = 20240607


@dataclass(frozen=True)
class Params:
    """Sizes of everything generated; ``quick`` divides them by ~100."""

    mode: str
    packages: int  # tree: packages x modules x files
    modules: int
    files: int
    lines_per_file: tuple[int, int]
    log_bytes: int
    big_source_bytes: int
    ls_entries: int
    write_bytes: int
    needle_files: int  # files holding the rare "full scan" needle
    ctx_files: int  # files holding the "with context" marker
    batch_reads: int

    @staticmethod
    def for_mode(quick: bool) -> Params:
        if quick:
            return Params("quick", 10, 10, 10, (150, 350), 10 << 20, 200 << 10, 10_000 // 100,
                          512 << 10, 16, 8, 1000)
        return Params("full", 100, 50, 20, (150, 350), 1 << 30, 20 << 20, 10_000,
                      50 << 20, 64, 24, 1000)

    @property
    def tree_files(self) -> int:
        return self.packages * self.modules * self.files


WORDS = (
    "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega buffer cursor "
    "handle index node edge graph token parser lexer scanner reader writer stream frame "
    "packet header footer record entry value result error option config setting state "
    "cache store queue stack heap tree list map set vector matrix tensor shape layout "
    "widget button window panel dialog render paint draw layer scene camera light mesh "
    "user account session request response client server socket channel message event"
).split()
TYPES = "u8 u16 u32 u64 usize i32 i64 f32 f64 bool String Vec Option Result Buffer Node".split()

EXTENSIONS = ("rs", "py", "ts", "js", "md", "json", "go", "c", "h", "txt")
EXT_WEIGHTS = (30, 18, 16, 10, 8, 5, 5, 4, 3.5, 0.5)


def _ident(rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"


def _line_pool(rng: random.Random, size: int) -> list[str]:
    """Source-like lines (no TODO, no needle, no ctxmark): the bulk of every file."""
    templates = (
        lambda: f"    let {_ident(rng)} = {_ident(rng)}.{rng.choice(WORDS)}({rng.randrange(1000)});",
        lambda: f"    // {' '.join(rng.choice(WORDS) for _ in range(rng.randrange(3, 12)))}",
        lambda: f"fn {_ident(rng)}({rng.choice(WORDS)}: {rng.choice(TYPES)}) -> {rng.choice(TYPES)} {{",
        lambda: f"    if {_ident(rng)} > {rng.randrange(10000)} {{ return {_ident(rng)}; }}",
        lambda: "}",
        lambda: "",
        lambda: f"def {_ident(rng)}(self, {rng.choice(WORDS)}, {rng.choice(WORDS)}=None):",
        lambda: f"        return self.{_ident(rng)}[{rng.randrange(64)}]",
        lambda: f"import {{ {_ident(rng)} }} from \"./{rng.choice(WORDS)}/{rng.choice(WORDS)}\";",
        lambda: f"export const {_ident(rng)} = ({rng.choice(WORDS)}) => {rng.choice(WORDS)} * {rng.randrange(99)};",
        lambda: f"    {_ident(rng)}.push_str(\"{' '.join(rng.choice(WORDS) for _ in range(4))}\");",
        lambda: f"    match {rng.choice(WORDS)} {{ Some(v) => v.{rng.choice(WORDS)}(), None => {rng.randrange(7)} }}",
    )
    return [rng.choice(templates)() for _ in range(size)]


def _log_pool(rng: random.Random, size: int) -> list[str]:
    levels = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
    return [
        f"{rng.choice(levels)} [worker-{rng.randrange(32):02d}] {rng.choice(WORDS)} "
        f"{rng.choice(WORDS)} id={rng.randrange(1 << 32):08x} took={rng.randrange(2000)}ms "
        f"path=/api/{rng.choice(WORDS)}/{rng.choice(WORDS)}"
        for _ in range(size)
    ]


class Corpus:
    """Paths and ground truth of one generated corpus."""

    def __init__(self, root: Path, params: Params):
        self.root = root
        self.params = params
        self.tree = root / "tree"
        self.log = root / "log" / "big.log"
        self.source = root / "src" / "big.rs"
        self.source_orig = root / "src-orig" / "big.rs"
        self.ls_dir = root / "lsdir"
        self.small = root / "small" / "small.txt"
        self.scratch = root / "scratch"
        self.manifest_path = root / "manifest.json"
        self.manifest: dict = {}

    # ----------------------------------------------------------------- generation

    def ensure(self, log) -> bool:
        """Generate unless a matching stamp is present. Returns True when it generated."""
        stamp = self.root / "stamp.json"
        want = {"generator": GENERATOR_VERSION, "seed": SEED, "params": self.params.__dict__}
        if stamp.exists() and self.manifest_path.exists():
            try:
                if json.loads(stamp.read_text()) == json.loads(json.dumps(want)):
                    self.manifest = json.loads(self.manifest_path.read_text())
                    return False
            except (OSError, ValueError):
                pass
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True)
        rng = random.Random(SEED)
        log(f"generating {self.params.mode} corpus in {self.root} (seed {SEED}) ...")
        self.manifest = {}
        self._gen_tree(rng, log)
        self._gen_log(rng, log)
        self._gen_source(rng, log)
        self._gen_ls_dir()
        self.small.parent.mkdir(parents=True)
        self.small.write_text("alpha\nbeta\ngamma\n")
        self.manifest_path.write_text(json.dumps(self.manifest))
        stamp.write_text(json.dumps(want))
        return True

    def _gen_tree(self, rng: random.Random, log) -> None:
        p = self.params
        pool = _line_pool(rng, 40_000)
        todo = [f"    // TODO: {' '.join(rng.choice(WORDS) for _ in range(5))}" for _ in range(500)]
        total = p.tree_files
        needle_at = set(rng.sample(range(total), p.needle_files))
        ctx_at = set(rng.sample(sorted(set(range(total)) - needle_at), p.ctx_files))
        files, toml, needles, ctx, line_counts = [], [], [], [], {}
        written = 0
        index = 0
        for a in range(p.packages):
            for b in range(p.modules):
                d = self.tree / f"pkg{a:03d}" / f"mod{b:03d}"
                d.mkdir(parents=True)
                for c in range(p.files):
                    ext = rng.choices(EXTENSIONS, EXT_WEIGHTS)[0]
                    if index % 200 == 199:
                        ext = "toml"  # 0.5 % of files: the find scenario's answer
                    rel = f"pkg{a:03d}/mod{b:03d}/f{c:04d}.{ext}"
                    n = rng.randint(*p.lines_per_file)
                    lines = rng.choices(pool, k=n)
                    for _ in range(max(1, n // 150)):  # ~1 TODO per 150 lines
                        lines[rng.randrange(n)] = rng.choice(todo)
                    if index in needle_at:
                        at = rng.randrange(5, n - 5)
                        lines[at] = f"    let found = \"needle_{index:06d}_pith\";"
                        needles.append(f"{rel}:{at + 1}")
                    if index in ctx_at:
                        at = rng.randrange(5, n - 5)
                        lines[at] = f"    ctxmark_{index:06d}();"
                        ctx.append(f"{rel}:{at + 1}")
                    data = "\n".join(lines) + "\n"
                    (self.tree / rel).write_text(data)
                    written += len(data)
                    files.append(rel)
                    line_counts[rel] = n
                    if ext == "toml":
                        toml.append(rel)
                    index += 1
            if a % 10 == 9:
                log(f"  tree: {index}/{total} files, {written >> 20} MiB")
        self.manifest.update(tree_files=files, toml=toml, needles=needles, ctx=ctx,
                             line_counts=line_counts, tree_bytes=written)

    def _gen_log(self, rng: random.Random, log) -> None:
        pool = _log_pool(rng, 20_000)
        self.log.parent.mkdir(parents=True)
        seq = 0
        size = 0
        with open(self.log, "w") as f:
            while size < self.params.log_bytes:
                chunk = "".join(
                    f"{seq + i:010d} 2024-06-07T{(seq + i) // 3600000 % 24:02d}:{(seq + i) // 60000 % 60:02d}:"
                    f"{(seq + i) // 1000 % 60:02d}.{(seq + i) % 1000:03d}Z {line}\n"
                    for i, line in enumerate(rng.choices(pool, k=10_000))
                )
                f.write(chunk)
                seq += 10_000
                size += len(chunk)
                if seq % 2_000_000 == 0:
                    log(f"  log: {size >> 20} MiB")
        self.manifest.update(log_lines=seq, log_bytes=size)

    def _gen_source(self, rng: random.Random, log) -> None:
        self.source.parent.mkdir(parents=True)
        self.source_orig.parent.mkdir(parents=True)
        parts, size, i = [], 0, 0
        while size < self.params.big_source_bytes:
            body = (
                f"/// {' '.join(rng.choice(WORDS) for _ in range(8))}\n"
                f"pub fn item_{i:06d}(x: u64, label: &str) -> u64 {{\n"
                f"    let {_ident(rng)} = x * {rng.randrange(1, 100)};\n"
                f"    let name = \"{rng.choice(WORDS)} {rng.choice(WORDS)}\";\n"
                f"    if x > {rng.randrange(1000)} {{\n"
                f"        return x + {rng.randrange(1000)};\n"
                f"    }}\n"
                f"    println!(\"{{}} {{}}\", label, name);\n"
                f"    x.wrapping_mul({rng.randrange(3, 999)})\n"
                f"}}\n\n"
            )
            parts.append(body)
            size += len(body)
            i += 1
        text = "".join(parts)
        self.source_orig.write_text(text)
        shutil.copyfile(self.source_orig, self.source)
        self.manifest.update(source_items=i, source_bytes=len(text))

    def _gen_ls_dir(self) -> None:
        self.ls_dir.mkdir(parents=True)
        names = []
        for i in range(self.params.ls_entries):
            if i % 10 == 3:
                (self.ls_dir / f"n{i:05d}").mkdir()
                names.append(f"n{i:05d}/")
            else:
                (self.ls_dir / f"n{i:05d}.rs").write_text("x\n")
                names.append(f"n{i:05d}.rs")
        self.manifest.update(ls_names=sorted(names))

    # ---------------------------------------------------------------- helpers

    def restore_source(self) -> None:
        shutil.copyfile(self.source_orig, self.source)

    def write_content(self) -> str:
        """The content of the write scenario: deterministic ASCII text of ``write_bytes``."""
        rng = random.Random(SEED + 1)
        pool = _line_pool(rng, 5_000)
        out, size = [], 0
        while size < self.params.write_bytes:
            line = rng.choice(pool) + "\n"
            out.append(line)
            size += len(line)
        return "".join(out)

    def batch_files(self) -> list[str]:
        files = self.manifest["tree_files"]
        rng = random.Random(SEED + 2)
        return [rng.choice(files) for _ in range(self.params.batch_reads)]

    def clean_scratch(self) -> None:
        if self.scratch.exists():
            shutil.rmtree(self.scratch)
        self.scratch.mkdir(parents=True)

