#!/usr/bin/env bash
# Grades the full corpus (cases/public + cases/hidden) with isr-reference as the student, and
# compares in the same run with a plain sequential shell loop that feeds each trace to the same
# binary and `cmp`s the output with the expected file. Also measures what the diagnosis costs,
# with a student that has a known mistake (from `--timings`), and what the sandbox costs per case
# (the same grading with `--sandbox off`).
# Usage: bench/grade-vs-loop.sh [ROUNDS]   (best of ROUNDS, default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
cargo build --release -q -p isr-reference -p isr-grader
ref=$PWD/target/release/isr-reference
grader=$PWD/target/release/isr-grader
traces=$(find cases/public cases/hidden -name '*.trace' | sort)
n=$(echo "$traces" | wc -l)

loop() {
  for t in $traces; do
    "$ref" "$t" | cmp -s - "${t%.trace}.out" || echo "differs: $t"
  done
}
grade() {
  # Like with like: the corpus only (exploration runs the program on more traces).
  "$grader" test --cases cases/public --cases cases/hidden --explore 0 -- "$ref" > /dev/null
}
grade_unsandboxed() {
  "$grader" test --sandbox off --cases cases/public --cases cases/hidden -- "$ref" > /dev/null
}
best() { # best wall-clock seconds of "$@" over $rounds rounds
  local b=999999999999
  for _ in $(seq "$rounds"); do
    local s e
    s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N)
    b=$(( (e - s) < b ? (e - s) : b ))
  done
  echo "$b"
}
t_loop=$(best loop)
t_grade=$(best grade)
t_off=$(best grade_unsandboxed)
sandbox=$("$grader" test --format json --cases cases/public -- "$ref" | awk -F'"' '/"sandbox"/ {print $4; exit}')
diag=$( ("$grader" test --timings --cases cases/public --cases cases/hidden -- "$grader" leader --fault caught-up-equality-only 2>&1 >/dev/null || true) | awk '/timing: diagnose/ {print $3}')
awk -v n="$n" -v l="$t_loop" -v g="$t_grade" -v o="$t_off" -v d="$diag" -v cores="$(nproc)" -v sb="$sandbox" 'BEGIN {
  printf "cases: %d, cores: %d\n", n, cores
  printf "sandbox: %s\n", sb
  printf "shell loop (sequential, cmp):   %7.1f ms\n", l / 1e6
  printf "isr-grader test (everything):   %7.1f ms   ratio %.2f of the loop\n", g / 1e6, g / l
  printf "isr-grader test --sandbox off:  %7.1f ms   ratio %.2f of the loop\n", o / 1e6, o / l
  printf "sandbox cost per case:          %7.2f ms wall (%d cases at once), %.2f ms of a core\n", (g - o) / 1e6 / n, cores, (g - o) / 1e6 / n * cores
  printf "diagnosis of a faulty student:  %7.1f ms\n", d
}'
