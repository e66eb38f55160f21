#!/usr/bin/env bash
# Creates (or reuses) a Python virtual environment holding LiteRT's Python package, the reference Kiln's
# answers and speed are compared against (bench/litert_bench.py, tests/models/litert_compare.py).
#
# usage: bench/litert_env.sh VENV_DIR [PYTHON]
#   VENV_DIR  where the environment goes, under a build folder (e.g. build/ci/litert-venv); never system-wide
#   PYTHON    the interpreter the environment is made from (default: $KILN_LITERT_PYTHON, else python3);
#             ai-edge-litert publishes wheels for CPython 3.9-3.12 on Linux x86_64 and aarch64
#
# Idempotent: an environment that already imports ai_edge_litert and numpy is reused without touching the
# network. Prints the environment's python on its last line. Exit status: 0 ready; 77 LiteRT cannot be had
# here (PyPI unreachable, or no wheel for this Python/platform), with a message saying which; 1 other errors.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 VENV_DIR [PYTHON]" >&2
  exit 2
fi
venv=$1
python=${2:-${KILN_LITERT_PYTHON:-python3}}
# Pinned so that every machine compares against the same LiteRT (override: KILN_LITERT_REQUIREMENT); numpy is
# whatever version that LiteRT accepts.
litert_req=${KILN_LITERT_REQUIREMENT:-ai-edge-litert==2.3.0}

check='import ai_edge_litert.interpreter, numpy'
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "litert_env: reusing $venv"
  echo "$venv/bin/python"
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "litert_env: creating $venv with $python"
  mkdir -p "$(dirname "$venv")"
  if ! out=$("$python" -m venv "$venv" 2>&1); then
    echo "$out" >&2
    echo "litert_env: cannot create a virtual environment with $python (Debian: apt-get install python3-venv)" >&2
    rm -rf "$venv"
    exit 1
  fi
fi

echo "litert_env: installing $litert_req and numpy into $venv"
log="$venv/pip-install.log"
# Short timeouts and one retry: an unreachable index should say so in seconds, not minutes.
if "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --timeout 20 --retries 1 \
    "$litert_req" numpy >"$log" 2>&1 && "$venv/bin/python" -c "$check" 2>>"$log"; then
  echo "litert_env: ready ($("$venv/bin/python" -m pip show ai-edge-litert 2>/dev/null | sed -n 's/^Version: //p'))"
  echo "$venv/bin/python"
  exit 0
fi

# Network failures, most telling first (pip retries, then reports only that no version was found).
net_errors=("Failed to establish a new connection: [^')]*" "Temporary failure in name resolution"
  "Name or service not known" "Network is unreachable" "Connection refused" "No route to host"
  "ConnectTimeout[^')]*" "Read timed out" "ProxyError[^']*" "SSLError[^']*" "Max retries exceeded")
index=$("$venv/bin/python" -m pip config get global.index-url 2>/dev/null || true)
index=${PIP_INDEX_URL:-${index:-https://pypi.org/simple}}
for pattern in "${net_errors[@]}"; do
  if net=$(grep -oE "$pattern" "$log" | head -n 1) && [ -n "$net" ]; then
    echo "PyPI unreachable: $index: $net (log: $log)" >&2
    exit 77
  fi
done
reason=$(grep -E "^ERROR" "$log" | tail -n 1 || true)
[ -n "$reason" ] || reason=$(tail -n 1 "$log")
if grep -qE "No matching distribution found|Could not find a version that satisfies" "$log"; then
  where=$("$venv/bin/python" -c \
    'import sys, platform; print("Python %d.%d on %s" % (sys.version_info[:2] + (platform.machine(),)))')
  echo "LiteRT unavailable: $index offers no $litert_req for $where: $reason (log: $log)" >&2
  exit 77
fi
echo "litert_env: pip install failed: $reason (log: $log)" >&2
exit 1
