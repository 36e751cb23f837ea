#!/usr/bin/env bash
# Create .venv and install codemod into it. `setup.sh test` also installs the test extras.
# torch is pinned to the CPU wheel first, so the test extra's range is already satisfied
# and pip never resolves a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
if [ "${1:-}" = "test" ]; then
    .venv/bin/python -m pip install --quiet "torch==2.13.0"
    .venv/bin/python -m pip install --quiet -e ".[test]"
else
    .venv/bin/python -m pip install --quiet -e .
fi
# An editable install compiles nothing, and PYTHONDONTWRITEBYTECODE (set on some machines)
# keeps Python from caching what it compiles: every run would compile codemod's modules
# from source (~0.1 s). Compile them once, as pip does for a regular install; a module
# edited later is recompiled when it is imported, as usual.
.venv/bin/python -m compileall -q codemod >/dev/null
