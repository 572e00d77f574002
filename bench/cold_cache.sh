#!/bin/bash
# explore --workers with numba's cache empty ("cold") and filled, two versions side by side.
#
#   bench/cold_cache.sh BASE [PUZZLE]
#
# checks BASE out into a temporary git worktree and runs, alternately with BASE's src and
# this tree's, `puzzlespace explore PUZZLE --workers N --threads 1 --json` (PUZZLE default
# 3x3) under GNU time: twice for N = 2 and 4 with a new empty NUMBA_CACHE_DIR each run,
# then three times for N = 2 with a cache folder kept per version (the first run of each
# fills it). Prints a Markdown table: version, workers, cache, wall s, CPU s, engine s.
set -euo pipefail
base=$1
puzzle=${2:-3x3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add -q "$tmp/base" "$base"
mkdir "$tmp/this" && cp -r "$root/src" "$tmp/this/src"
python=${PYTHON:-$root/.venv/bin/python}

run() {  # version src workers cache-folder label
  rm -f "$tmp/time"
  out=$(env NUMBA_CACHE_DIR="$4" PYTHONPATH="$2" /usr/bin/time -f "%e %U %S" -o "$tmp/time" \
        "$python" -m puzzlespace explore "$puzzle" --workers "$3" --threads 1 --json)
  engine=$(echo "$out" | "$python" -c "import json, sys; print(json.load(sys.stdin)['seconds'])")
  read -r wall user sys < "$tmp/time"
  echo "| $1 | $3 | $5 | $wall | $(awk "BEGIN { print $user + $sys }") | $engine |"
}

echo "# cold_cache: $puzzle, base $base against $(git -C "$root" describe --always --dirty);" \
     "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "| version | workers | numba cache | wall s | CPU s | engine s |"
echo "|---|---|---|---|---|---|"
for _ in 1 2; do
  for workers in 2 4; do
    for version in base this; do
      rm -rf "$tmp/cold" && mkdir "$tmp/cold"
      run "$version" "$tmp/$version/src" "$workers" "$tmp/cold" empty
    done
  done
done
mkdir -p "$tmp/kept-base" "$tmp/kept-this"
for round in 1 2 3; do
  for version in base this; do
    run "$version" "$tmp/$version/src" 2 "$tmp/kept-$version" "$([ $round = 1 ] && echo empty || echo filled)"
  done
done
