#!/usr/bin/env bash
# MCP client tests against the real binary: the official Python SDK (tests/mcp/client.py)
# and the MCP inspector's CLI mode. Installs both locally when missing:
#   .venv/              python venv with mcp==2.3.0
#   .tools/inspector/   npm @modelcontextprotocol/inspector@1.0.3 (runs on node 20)
# Usage: tests/mcp/run.sh [PATH_TO_PITH]   (default: target/debug/pith, built if missing)
# Prints one `PASS name` or `FAIL name: why` line per check (scripts/test counts them).
# Without python3 (and its venv module) the checks are skipped visibly: recorded in
# $PITH_SKIP_LOG, and a failure if $PITH_PRESENT says Python is here.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

MCP_VERSION=2.3.0
INSPECTOR_VERSION=1.0.3

if [[ $# -ge 1 ]]; then
    pith=$1
else
    # Always (re)build: a stale binary from an older checkout would test the wrong code.
    cargo build -p pith --quiet
    pith=$root/target/debug/pith
fi
pith=$(realpath "$pith")

if ! command -v python3 >/dev/null || ! python3 -c 'import venv' 2>/dev/null; then
    if [[ ,${PITH_PRESENT:-}, == *,python,* ]]; then
        echo "FAIL MCP client tests: python3 with venv is missing, but the test command found it" >&2
        exit 1
    fi
    echo "SKIPPED MCP client tests: python3 with the venv module is not installed"
    if [[ -n ${PITH_SKIP_LOG:-} ]]; then
        printf 'tests/mcp/run.sh\tpython\tpython3 with the venv module is not installed\n' >>"$PITH_SKIP_LOG"
    fi
    exit 0
fi

if ! .venv/bin/python -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$MCP_VERSION'" 2>/dev/null; then
    echo "==> installing the Python MCP SDK $MCP_VERSION into .venv"
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
fi
# client.py validates structuredContent with jsonschema (a dependency of the SDK today).
if ! .venv/bin/python -c "import jsonschema" 2>/dev/null; then
    .venv/bin/pip install --quiet --disable-pip-version-check jsonschema
fi

inspector=.tools/inspector
if [[ ! -x $inspector/node_modules/.bin/mcp-inspector ]]; then
    echo "==> installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $inspector"
    mkdir -p "$inspector"
    (cd "$inspector" && { [[ -f package.json ]] || npm init -y >/dev/null; } &&
        npm install --silent --no-fund --no-audit "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" 2>&1 |
        grep -v EBADENGINE || true)
fi

echo "==> Python SDK client"
.venv/bin/python tests/mcp/client.py "$pith"

echo "==> MCP inspector CLI"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
work=$scratch/workspace
mkdir "$work"
echo "hello" > "$work/hello.txt"
run_inspector() {
    # The inspector prints a v1 deprecation notice on stderr: show it only on failure.
    if ! (cd "$root/$inspector" &&
        timeout 60 npx --no-install mcp-inspector --cli "$pith" mcp --cwd "$work" "$@" 2>"$scratch/inspector.log"); then
        cat "$scratch/inspector.log" >&2
        echo "mcp-inspector $* failed" >&2
        return 1
    fi
}

run_inspector --method tools/list > "$scratch/list.json"
python3 - "$scratch/list.json" <<'PY'
import json, sys
names = [tool["name"] for tool in json.load(open(sys.argv[1]))["tools"]]
expected = ["read", "bash", "edit", "write", "grep", "find", "ls", "jobs"]
assert names == expected, f"tools/list gave {names}, expected {expected}"
print("PASS inspector tools/list:", ", ".join(names))
PY

run_inspector --method tools/call --tool-name ls --tool-arg path=. > "$scratch/call.json"
python3 - "$scratch/call.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
assert not result.get("isError"), result
text = result["content"][0]["text"]
assert text.splitlines() == ["hello.txt"], f"ls gave {text!r}"
print("PASS inspector tools/call ls:", text.replace("\n", " "))
PY

echo "MCP client tests passed."
