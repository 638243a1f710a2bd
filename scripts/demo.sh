#!/usr/bin/env bash
# README command 1: set up, build a sample WARC from the shared pages, run the Spark job in local
# mode, and show the output (summary table, a few rows, the run record's counts).
#
#   bash scripts/demo.sh            (DATA_DIR=... to use another data root, DEMO_DIR=... for the output)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
PY="$PWD/.venv/bin/python"
DATA=${DATA_DIR:-../shared/data}
WORK=${DEMO_DIR:-out/demo}
if [ ! -d "$DATA/cleaneval-final/html" ]; then
    echo "[demo] shared data not found at $DATA (expected ../shared/data beside the checkout)" >&2
    exit 3
fi
mkdir -p "$WORK"
export PYSPARK_PYTHON="$PY" SPARK_LOCAL_IP=127.0.0.1

MODEL_ARGS=()
if [ ! -f cleaner/models/default.crfsuite ]; then
    if [ ! -f "$WORK/model.crfsuite" ]; then
        echo "[demo] no default model in cleaner/models/: training a quick one on cleaneval-dev" >&2
        .venv/bin/cleaner train "$DATA" --datasets cleaneval-dev --out "$WORK/model.crfsuite" \
            --max-iterations 30 --jobs 1 >&2
    fi
    MODEL_ARGS=(--model "$WORK/model.crfsuite")
fi

echo "[demo] building sample WARCs of 200 pages (100 CleanEval, 100 Dragnet) with make_warc" >&2
"$PY" scripts/make_warc.py "$DATA/cleaneval-final/html" --limit 100 --with-requests \
    --date 2024-01-01T00:00:00Z --out "$WORK/sample-cleaneval.warc.gz"
"$PY" scripts/make_warc.py "$DATA/dragnet/html" --limit 100 --with-requests \
    --date 2024-01-01T00:00:00Z --out "$WORK/sample-dragnet.warc.gz"
# One damaged file from the shared samples too: the job records its error and carries on.
rm -rf "$WORK/out"
echo "[demo] running the Spark job in local mode" >&2
"$PY" jobs/clean_warc.py --input "$WORK"/sample-*.warc.gz "$DATA/warc/example-trunc.warc" \
    --output "$WORK/out" --crawl demo "${MODEL_ARGS[@]}"

"$PY" - "$WORK/out" <<'PYEOF'
import json, sys, textwrap
import duckdb

out = sys.argv[1]
src = f"read_parquet('{out}/run=*/**/*.parquet', hive_partitioning = true)"
con = duckdb.connect()

def show(title, sql):
    print(f"\n== {title}\n{sql.strip()}\n")
    rel = con.sql(sql)
    print(rel)

show("documents by status and reason (DuckDB)",
     f"SELECT status, coalesce(reason, '') AS reason, count(*) AS docs FROM {src} GROUP BY ALL ORDER BY docs DESC")
show("boilerplate share by host (top 8)",
     f"""SELECT host, count(*) AS pages,
       round(sum(label_stats.other.words) / nullif(sum(words_total), 0), 3) AS boilerplate_share
FROM {src} WHERE status = 'cleaned' GROUP BY host ORDER BY pages DESC, host LIMIT 8""")
print("\n== three cleaned documents")
for url, title, share, expected, text in con.sql(
        f"SELECT url, title, kept_word_share, expected_f1, cleaneval FROM {src} "
        "WHERE status = 'cleaned' ORDER BY warc_offset LIMIT 3").fetchall():
    print(f"\n{url}  (kept {share:.0%} of words, expected word F1 {expected:.2f})")
    print(f"    title: {textwrap.shorten(title, 100, placeholder=' ...') or '(none)'}")
    print(textwrap.indent(textwrap.shorten(text, 400, placeholder=" ..."), "    "))

run = json.load(open(f"{out}/_run.json"))
t = run["totals"]
print(f"\n== {out}/_run.json (run {run['run_id']}, model {run['model']['hash']})")
print(json.dumps({"totals": t, "rows_written": run["output"]["rows_written"],
                  "parquet_files": run["output"]["files"], "docs_per_s": run["docs_per_s"],
                  "errors": run["errors"]}, indent=2))
PYEOF
