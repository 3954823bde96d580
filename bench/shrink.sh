#!/usr/bin/env bash
# Shrinking a long failing trace with a native program: a generated trace of 10,000 commands
# (scenario `mixed`, 4 replicas, LAG_MAX 100) and the reference leader with one known mistake as
# the student (`isr-grader leader --fault ID`, a native program). Prints, per mistake, the
# output line of the first divergence, the shrunk length, the program runs and the wall time.
# Targets: at most 10 commands, at most 3 s on 2 cores.
# Usage: bench/shrink.sh [MISTAKE...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p isr-grader
g=$PWD/target/release/isr-grader
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$g" gen mixed --seed 7 -p commands=10000 -p replicas=4 -p lag_max=100 -p min_isr=2 > "$dir/t.trace"
"$g" leader < "$dir/t.trace" > "$dir/ref.out"
mistakes=("$@")
if [ ${#mistakes[@]} -eq 0 ]; then
  mistakes=(hw-not-on-append hw-can-decrease ack-first-record caught-up-equality-only rejoin-needs-leader-leo min-isr-ignored)
fi
printf "%-26s %12s %9s %6s %8s\n" mistake "first diff" commands runs seconds
for f in "${mistakes[@]}"; do
  "$g" leader --fault "$f" < "$dir/t.trace" > "$dir/f.out"
  line=$(cmp "$dir/ref.out" "$dir/f.out" 2>/dev/null | awk '{print $NF}' || true)
  s=$(date +%s%N)
  out=$("$g" shrink "$dir/t.trace" -- "$g" leader --fault "$f" || true)
  e=$(date +%s%N)
  n=$(echo "$out" | sed -n 's/^smallest trace where your program differs (\([0-9]*\) command.*/\1/p')
  runs=$(echo "$out" | sed -n 's/.*, \([0-9]*\) program runs$/\1/p')
  printf "%-26s %12s %9s %6s %8.2f\n" "$f" "line ${line:-?}" "$n" "$runs" "$(awk -v d=$((e - s)) 'BEGIN {print d / 1e9}')"
done
