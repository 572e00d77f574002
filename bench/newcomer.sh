#!/usr/bin/env bash
# A newcomer's wait: clone this repository into an empty folder, make a fresh virtual
# environment with an empty cache, and time the README's two set-up commands, read from
# the README itself. pip's own download cache is left as it is (say in the record whether
# it was warm).
#
#     bash bench/newcomer.sh            # prints the two times and the machine
#     bash bench/newcomer.sh REV        # the same for an earlier commit (a baseline)
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$src" "$work/puzzlespace"
cd "$work/puzzlespace"
git checkout -q "${1:-HEAD}"
python3 -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PUZZLESPACE_CACHE="$work/cache"
mapfile -t setup < <(awk '/^```/ { inside = !inside; next } inside && /^pip install/ { print; if (++n == 2) exit }' README.md)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
echo "commit: $(git rev-parse --short HEAD)"
for command in "${setup[@]}"; do
    start=$(date +%s.%N)
    status=0
    bash -c "$command" > "$work/out.log" 2>&1 || status=$?
    end=$(date +%s.%N)
    printf '%-45s %7.1f s   exit %d   (%s)\n' "$command" "$(echo "$end - $start" | bc)" "$status" \
        "$(tail -1 "$work/out.log")"
done
