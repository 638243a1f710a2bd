#!/usr/bin/env bash
# Write requirements.lock: the exact version of every package of a resolved .venv (the project with its
# `dev` extra, which holds what the job, the tests and the compiled stages need), so that every machine
# installs what the shipped model and the documented figures were measured with.
#
#   bash scripts/lock_deps.sh            (after changing a range in pyproject.toml: upgrade .venv first,
#                                         e.g. .venv/bin/pip install -U -e '.[dev]', test, then lock)
#
# scripts/setup_env.sh installs with it as constraints (pip install -c requirements.lock -e '.[dev]'):
# pyproject.toml keeps compatible ranges for those who install the package into their own environment.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "lock_deps: no .venv: run scripts/setup_env.sh first" >&2; exit 3; }
out=requirements.lock
{
    echo "# Exact versions for scripts/setup_env.sh (pip install -c requirements.lock -e '.[dev]')."
    echo "# Written by scripts/lock_deps.sh from a resolved .venv with Python $(.venv/bin/python -c 'import platform; print(platform.python_version())'); do not edit by hand."
    # --exclude-editable: the project itself; pip, setuptools and wheel are the installer's, not the project's
    .venv/bin/python -m pip freeze --disable-pip-version-check --exclude-editable \
        | grep -viE '^(pip|setuptools|wheel)==' | LC_ALL=C sort -f
} > "$out.tmp"
# a freeze that names a package by a local path or URL cannot be installed elsewhere
if grep -E ' @ |^-e ' "$out.tmp" >&2; then
    rm -f "$out.tmp"
    echo "lock_deps: the packages above are not from the registry: install them from it first" >&2
    exit 1
fi
mv "$out.tmp" "$out"
echo "lock_deps: $(grep -cv '^#' "$out") packages pinned in $out" >&2
