#!/usr/bin/env bash
# Create .venv and install the project with everything the job and the tests need.
# Idempotent: re-running on a set-up machine only checks. Spark needs Java 17+.
set -euo pipefail
cd "$(dirname "$0")/.."

need_java() {
    command -v java >/dev/null 2>&1 || return 0
    local v
    v=$(java -version 2>&1 | awk -F'"' '/version/ {print $2}' | cut -d. -f1)
    [ "${v:-0}" -lt 17 ]
}
if need_java; then
    echo "[setup] Java 17+ not found: installing openjdk-17-jre-headless" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating .venv" >&2
    "$PY" -m venv .venv
fi
# Reinstall only when pyproject.toml or the lock file changed since the last install.
stamp=.venv/.installed-$(cat pyproject.toml requirements.lock | sha1sum | cut -c1-12)
if [ ! -f "$stamp" ]; then
    echo "[setup] installing the project and its dependencies at the versions of requirements.lock" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v "is ignored" >&2 || true
    # -c: the exact versions of requirements.lock (scripts/lock_deps.sh), within pyproject.toml's ranges
    .venv/bin/python -m pip install -q --disable-pip-version-check -c requirements.lock -e ".[dev]" 2>&1 \
        | grep -v "is ignored" >&2 || true
    .venv/bin/python -c "import cleaner, selectolax, pycrfsuite, pyspark" || { echo "[setup] install failed" >&2; exit 1; }
    rm -f .venv/.installed-*; touch "$stamp"
fi
# The per-block stages compiled with mypyc (cleaner/__init__.py): built again only when one of their
# sources changed since the last build. Without a C compiler they stay pure Python (same output, slower).
# Profile-guided (gcc) when there are pages to train it on: $WEBCLEANER_PROFILE_PAGES (a sample of the crawl to
# clean is best), else the shared data beside the checkout; the same output, ~4 % less CPU (docs/speed.md, stop 78).
profile=()
if [ -z "${WEBCLEANER_PROFILE_PAGES:-}" ] && [ -d ../shared/data ]; then
    profile=(--profile-pages ../shared/data)
fi
.venv/bin/python scripts/build_native.py --if-stale "${profile[@]}" \
    || echo "[setup] the compiled stages were not built: running as pure Python" >&2
