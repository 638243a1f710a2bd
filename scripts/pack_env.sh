#!/usr/bin/env bash
# Build what spark-submit ships to a cluster (see README, "Running on a cluster"):
#   dist/webcleaner-env.tar.gz  a packed virtualenv (venv-pack) with the project and its compiled
#                               dependencies (selectolax, python-crfsuite, pyarrow, ...): --archives
#   dist/jobs.zip               the job's own modules (jobs/): --py-files (needed in cluster deploy mode)
# pyspark is left out on purpose: executors use their cluster's pyspark.
# venv-pack does not copy the interpreter: nodes need the same Python (3.11) at the same path.
#
# Usage: bash scripts/pack_env.sh [OUT_DIR]      (PYTHON=python3.11 to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-dist}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
BUILD=$(mktemp -d)
trap 'rm -rf "$BUILD"' EXIT

echo "[pack] creating a fresh virtualenv with $("$PY" --version 2>&1)" >&2
"$PY" -m venv "$BUILD/env"
"$BUILD/env/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v "is ignored" >&2 || true
# Not editable: the archive must hold the package itself (with its model), not a link to this checkout. The wheel
# pip builds carries the compiled stages (setup.py; an install stops with a message when they cannot be built).
# PIP_CONSTRAINT rather than -c: the lock's versions hold in the build's own environment too (mypy, Cython).
PIP_CONSTRAINT="$PWD/requirements.lock" "$BUILD/env/bin/python" -m pip install -q --disable-pip-version-check ".[pack]" \
    2>&1 | grep -v "is ignored" >&2 || true
"$BUILD/env/bin/python" -c "import cleaner, selectolax, pycrfsuite, pyarrow, warcio, venv_pack" \
    || { echo "[pack] install failed" >&2; exit 1; }
(cd "$BUILD" && env/bin/python -c "import cleaner; print('[pack] installed cleaner:', cleaner.NATIVE_STATUS)" >&2)

echo "[pack] packing $OUT/webcleaner-env.tar.gz" >&2
"$BUILD/env/bin/venv-pack" -p "$BUILD/env" -o "$OUT/webcleaner-env.tar.gz" --force -q

"$BUILD/env/bin/python" - "$OUT/jobs.zip" <<'PYEOF'
import pathlib, sys, zipfile
out = pathlib.Path(sys.argv[1])
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
    for py in sorted(pathlib.Path("jobs").glob("*.py")):
        zf.write(py, f"jobs/{py.name}")
print(f"[pack] wrote {out}", file=sys.stderr)
PYEOF
chmod 644 "$OUT/webcleaner-env.tar.gz"
ls -l "$OUT"/webcleaner-env.tar.gz "$OUT"/jobs.zip >&2
cat >&2 <<MSG
[pack] submit with:
  spark-submit --archives $OUT/webcleaner-env.tar.gz#env --py-files $OUT/jobs.zip \\
    --conf spark.pyspark.python=./env/bin/python jobs/clean_warc.py --input ... --output ...
MSG
