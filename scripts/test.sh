#!/usr/bin/env bash
# Install codemod with its test dependencies, lint and type-check codemod/, then run the
# whole test suite. A ruff or mypy error fails the run before pytest starts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check codemod
.venv/bin/mypy codemod
exec .venv/bin/python -m pytest -q "$@"
