#!/usr/bin/env bash
# Install codemod and show what it would change in the bundled vLLM-shaped example tree.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
status=0
.venv/bin/codemod apply --dry-run fixtures/engine || status=$?
# Exit 1 means "changes needed": that is the expected answer for the example.
[ "$status" -le 1 ] || exit "$status"
