#!/usr/bin/env bash
# Compare the cleaning core's speed of another revision with the working tree's, alternated in one sitting.
#
#   bash scripts/bench_versions.sh REV [ROUNDS=3] [EVERY=1] [-- bench_core options...]
#
# This machine's speed drifts by 10-15 % within an hour (docs/speed.md), more than most changes are worth, so
# two versions are only compared side by side: each round runs scripts/bench_core.py of REV (checked out in a
# temporary worktree, with this tree's .venv) and then of the working tree, and prints their "all pages" rows.
# Compare the ratio within each round, and the medians over the rounds.
#
# PARALLEL=1 runs the two at the same moment instead, each pinned to one of the machine's first two cores
# (swapped every round), so that both see the same machine speed: the drift between two consecutive runs was
# as large as the gain of the compiled stages (docs/speed.md, stop 25). Both versions get their compiled
# stages built first (scripts/build_native.py), when they have them.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: bench_versions.sh REV [ROUNDS] [EVERY] [-- bench_core options]}
rounds=${2:-3}
every=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = "--" ] && shift
[ -x .venv/bin/python ] || bash scripts/setup_env.sh
data=$(cd .. && pwd)/shared/data
ref=$(mktemp -d /tmp/bench-ref-XXXXXX)
trap 'git worktree remove --force "$ref" >/dev/null 2>&1 || rm -rf "$ref"' EXIT
git worktree add --detach "$ref" "$rev" >/dev/null
ln -s "$PWD/.venv" "$ref/.venv"
# A profile-guided build of the tree (scripts/setup_env.sh makes one beside the shared data) is ~4 % faster than a
# plain one of the same code (docs/speed.md, stop 78): REV is then built profile-guided too, on the same pages.
# (The tree's build is read before its own rebuild: a tree with no build, or a plain one, is compared plain.)
profile=()
if .venv/bin/python -c "import json, sys; sys.exit(not json.load(open('cleaner/_native/manifest.json')).get('profile'))" \
    2>/dev/null; then
  if grep -q -- "--profile-pages" "$ref/scripts/build_native.py" 2>/dev/null; then
    profile=(--profile-pages "$data")
  else
    echo "[bench] the tree's build is profile-guided, REV's cannot be (before stop 78): REV's times include ~4 % more" >&2
  fi
fi
for dir in "$ref" "$PWD"; do  # (a revision before stop 25 has no compiled stages: it runs as Python)
  if [ -f "$dir/scripts/build_native.py" ]; then
    # (the tree's own build too, when stale: made again profile-guided, not plain beside a profile-guided REV)
    (cd "$dir" && .venv/bin/python scripts/build_native.py --if-stale "${profile[@]}") \
      || echo "[bench] $dir runs as pure Python" >&2
  fi
done
echo "REV = $(git -C "$ref" log --oneline -1), tree = $(git log --oneline -1)$(git diff --quiet || echo ' + changes')"
bench() {  # DIR [CORE]: bench_core's table for the checkout in DIR
  local pin=()
  [ -n "${2:-}" ] && pin=(taskset -c "$2")
  (cd "$1" && "${pin[@]}" .venv/bin/python scripts/bench_core.py --data "$data" --every "$every" "${@:3}")
}
header=""
row() {  # ROUND NAME TABLE
  if [ -z "$header" ]; then  # bench_core's own column names, once
    header=$(grep '^| set ' <<<"$3")
    echo "| round | code $header"
  fi
  echo "| $1 | $2 $(grep '^| all ' <<<"$3")"
}
for round in $(seq 1 "$rounds"); do
  if [ "${PARALLEL:-0}" = 1 ]; then
    c_ref=$(( (round + 1) % 2 )); c_tree=$(( round % 2 ))
    out=$(mktemp)
    bench "$ref" "$c_ref" "$@" > "$out" &
    table_tree=$(bench "$PWD" "$c_tree" "$@")
    wait
    row "$round" "REV (core $c_ref)" "$(cat "$out")"
    row "$round" "tree (core $c_tree)" "$table_tree"
    rm -f "$out"
  else
    row "$round" REV "$(bench "$ref" "" "$@")"
    row "$round" tree "$(bench "$PWD" "" "$@")"
  fi
done
