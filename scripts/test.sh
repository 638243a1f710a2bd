#!/usr/bin/env bash
# The README's test command: set up (venv, Java) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
# Static checks first (seconds): no import circles and no private names taken across modules (ast),
# the lint rules of pyproject.toml, and the types
.venv/bin/python scripts/check_imports.py
.venv/bin/ruff check cleaner jobs scripts
.venv/bin/mypy cleaner jobs
# -n 2: the machine has 2 cores. --dist loadfile keeps each file on one worker, so the
# Spark tests of a file share one JVM and never run beside each other.
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile "$@"
