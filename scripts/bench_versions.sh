#!/usr/bin/env bash
# Compare the cleaning core's speed of another revision with the working tree's, alternated in one sitting.
#
#   bash scripts/bench_versions.sh REV [ROUNDS=3] [EVERY=1] [-- bench_core options...]
#
# This machine's speed drifts by 10-15 % within an hour (docs/speed.md), more than most changes are worth, so
# two versions are only compared side by side: each round runs scripts/bench_core.py of REV (checked out in a
# temporary worktree, with this tree's .venv) and then of the working tree, and prints their "all pages" rows.
# Compare the ratio within each round, and the medians over the rounds.
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
echo "REV = $(git -C "$ref" log --oneline -1), tree = $(git log --oneline -1)$(git diff --quiet || echo ' + changes')"
header=""
for round in $(seq 1 "$rounds"); do
  for dir in "$ref" "$PWD"; do
    name=$([ "$dir" = "$PWD" ] && echo tree || echo REV)
    table=$(cd "$dir" && .venv/bin/python scripts/bench_core.py --data "$data" --every "$every" "$@")
    if [ -z "$header" ]; then  # bench_core's own column names, once
      header=$(grep '^| set ' <<<"$table")
      echo "| round | code $header"
    fi
    echo "| $round | $name $(grep '^| all ' <<<"$table")"
  done
done
