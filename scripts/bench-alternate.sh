#!/usr/bin/env bash
# Runs one benchmark built from several commits, alternating round by round, so that a shared machine's noise falls
# on every build alike (docs/audit-log-measurements.md compares builds so).
#
#   scripts/bench-alternate.sh BENCH ENGINE ROUNDS DIR...
#
# Each DIR holds the benchmark's binary named BENCH, copied out of the target directory after building that commit
# (`cargo bench -p frontdesk --bench BENCH --no-run` prints where it is; the name is the same for every commit, so
# copy it before building the next). ENGINE is sqlite or postgres. Prints each round's result under its build.
#
# Worktrees of one crate built into one target directory share their fingerprints: cargo may take a worktree whose
# files are older than the last build for built already, and link the last build's library. Touch the crate's
# src/lib.rs before each build, and check that "Compiling frontdesk (<the worktree's path>)" is printed.
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n 2,13p "$0" >&2
  exit 2
fi
bench=$1 engine=$2 rounds=$3
shift 3
cd "$(dirname "$0")/../crates/frontdesk"
for round in $(seq 1 "$rounds"); do
  for dir in "$@"; do
    echo "### $dir round $round"
    FRONTDESK_BENCH_ENGINES=$engine "$dir/$bench" --bench 2>&1 | grep -v '^$'
  done
done
