#!/usr/bin/env bash
# What exploration and shrinking cost a Python student: the student template with a correct
# solution (tests/fixtures/solutions/python) graded on the built-in public cases, with the
# default exploration (30 traces) and without it (--explore 0), best of ROUNDS; then the same
# template with a known mistake (shrink-inclusive, made by editing the solution) so that every
# failing case is also shrunk.
# Usage: bench/explore-cost.sh [ROUNDS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
cargo build --release -q -p isr-grader
g=$PWD/target/release/isr-grader
dir=$(mktemp -d)
chmod 755 "$dir"   # the sandbox runs the program as another user
trap 'rm -rf "$dir"' EXIT
cp -r student-template/python "$dir/ok"
cp tests/fixtures/solutions/python/leader.py "$dir/ok/leader.py"
best() { # best wall-clock seconds of "$@" over $rounds rounds
  local b=999999999999
  for _ in $(seq "$rounds"); do
    local s e
    s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N)
    b=$(( (e - s) < b ? (e - s) : b ))
  done
  echo "$b"
}
run() { local d=$1; shift; (cd "$d" && "$g" test "$@"); }
sec() { awk -v d="$1" 'BEGIN {print d / 1e9}'; }
t_off=$(best run "$dir/ok" --explore 0)
t_on=$(best run "$dir/ok")
runs=$( (cd "$dir/ok" && "$g" test --timings 2>&1 >/dev/null || true) | sed -n 's/timing: beyond the corpus, the program ran \([0-9]*\) times/\1/p')
printf "python, correct:   corpus only %5.2f s   with exploration %5.2f s   (+%.2f s, %s extra runs)\n" \
  "$(sec "$t_off")" "$(sec "$t_on")" "$(sec $((t_on - t_off)))" "$runs"
# A known mistake: the lag check with >= instead of > (shrink-inclusive).
if grep -q "def " "$dir/ok/leader.py"; then
  cp -r "$dir/ok" "$dir/bad"
  python3 - "$dir/bad/leader.py" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
# Off by one in the lag check: >= instead of > (the catalog's shrink-inclusive).
s2 = s.replace(" > self.lag_max", " >= self.lag_max", 1)
open(p, "w").write(s2)
print("mutated" if s2 != s else "unchanged", file=sys.stderr)
PY
  t_bad=$(best run "$dir/bad")
  t_bad_off=$(best run "$dir/bad" --explore 0 --shrink-seconds 0)
  runs=$( (cd "$dir/bad" && "$g" test --timings 2>&1 >/dev/null || true) | sed -n 's/timing: beyond the corpus, the program ran \([0-9]*\) times/\1/p')
  printf "python, a mistake: no exploration, no shrinking %5.2f s   default %5.2f s   (%s extra runs)\n" \
    "$(sec "$t_bad_off")" "$(sec "$t_bad")" "$runs"
fi
