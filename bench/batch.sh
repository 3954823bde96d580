#!/usr/bin/env bash
# A class of N submissions (default 100: RUST of them Rust, default 10 — half correct, 3
# mistaken, 2 failing to build — the rest Python, two thirds correct, one third mistaken) graded
# against the whole corpus (cases/public + cases/hidden, default exploration) in two ways:
#   1. isr-grader batch (--jobs JOBS submissions at once, --case-jobs CASE_JOBS cases each);
#   2. a shell loop of `isr-grader test` one submission after another (each with its default
#      --jobs: the number of cores), writing the same reports (JSON, HTML, pictures).
# Both start from clean submissions (no target/), so both build the Rust ones. /usr/bin/time
# gives wall, user and sys seconds; (user + sys) / wall is how many cores were busy on average.
# The batch's own share (its process, not its children) comes from /proc.
# Usage: bench/batch.sh                      N=100 RUST=10 JOBS=2 CASE_JOBS=1
#        SPLITS="2x1 1x2 2x2 4x1" N=20 bench/batch.sh   only the batch, once per JOBSxCASE_JOBS
# Needs: cargo, python3, /usr/bin/time (GNU time). Run on a quiet machine; quote ranges.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100}
RUST=${RUST:-10}
JOBS=${JOBS:-2}
CASE_JOBS=${CASE_JOBS:-1}
cargo build --release -q -p isr-grader
grader=$PWD/target/release/isr-grader
work=$(mktemp -d)
# The programs run as nobody in the sandbox: they must reach their folders.
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

# The class.
subs=$work/subs
mkdir -p "$subs"
for i in $(seq 1 "$N"); do
  name=$(printf 's%03d' "$i")
  if [ "$i" -le "$RUST" ]; then
    d=$subs/$name-rust
    mkdir -p "$d"
    cp student-template/Cargo.toml student-template/Cargo.lock "$d/"
    cp -r student-template/src "$d/src"
    cp tests/fixtures/solutions/rust/leader.rs "$d/src/leader.rs"
    if [ "$i" -le $((RUST - 5)) ] && [ "$i" -gt $((RUST - 8)) ]; then
      # shrink-inclusive: >= instead of > in the lag check
      sed -i 's/ > self.lag_max/ >= self.lag_max/' "$d/src/leader.rs"
    elif [ "$i" -le $((RUST - 8)) ]; then
      echo "this is not rust" > "$d/src/leader.rs"
    fi
  else
    d=$subs/$name-python
    mkdir -p "$d"
    cp student-template/python/*.py "$d/"
    cp tests/fixtures/solutions/python/leader.py "$d/leader.py"
    if [ $((i % 3)) -eq 0 ]; then
      sed -i 's/ > self.lag_max/ >= self.lag_max/' "$d/leader.py"
    fi
  fi
done
cat > "$work/instructor.toml" <<EOF
cases = ["$PWD/cases/public", "$PWD/cases/hidden"]
EOF

clean() { rm -rf "$subs"/*/target "$subs"/*/__pycache__ "$work/out" "$work/loop"; }
# timed LABEL CMD...: runs CMD under /usr/bin/time, prints LABEL wall user+sys cores-busy.
timed() {
  local label=$1; shift
  clean
  /usr/bin/time -f '%e %U %S' -o "$work/time" "$@" > /dev/null 2> "$work/stderr" || true
  read -r wall user sys < "$work/time"
  awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN {
    printf "%-34s wall %7.1f s   cpu (user+sys) %7.1f s   cores busy %.2f\n", l, w, u + s, (u + s) / w
  }'
}

echo "class: $N submissions ($RUST Rust: up to 5 correct, 3 mistaken, 2 not building; the rest Python, 1 in 3 mistaken), $(nproc) cores"
echo "grader: $("$grader" --version)"
# A python3 that is a shim (pyenv's is a bash script) costs about 0.1 s per case: put the real
# one first in PATH (PATH=/usr/bin:$PATH bench/batch.sh) to measure the grader, not the shim.
echo "python3: $(command -v python3)"
if [ -n "${SPLITS:-}" ]; then
  for split in $SPLITS; do
    j=${split%x*}; c=${split#*x}
    timed "batch --jobs $j --case-jobs $c" "$grader" batch "$subs" --instructor-config "$work/instructor.toml" --out "$work/out" --jobs "$j" --case-jobs "$c" --quiet
  done
  exit 0
fi

timed "batch --jobs $JOBS --case-jobs $CASE_JOBS" "$grader" batch "$subs" --instructor-config "$work/instructor.toml" --out "$work/out" --jobs "$JOBS" --case-jobs "$CASE_JOBS" --quiet
tail -1 "$work/stderr"
# The children's own time, summed from batch.json: what the batch adds is the rest.
summed=$(cat "$work"/out/submissions/*/batch.json | awk -F': ' '/duration_secs/ {gsub(",", "", $2); s += $2} END {print s}')
batch_wall=$(cut -d' ' -f1 "$work/time")
loop() {
  # Like with like: the same reports as batch writes (JSON, HTML, pictures).
  for d in "$subs"/*/; do
    n=$(basename "$d")
    mkdir -p "$work/loop/$n"
    "$grader" test --instructor-config "$work/instructor.toml" --submission "$d" --format json \
      --html "$work/loop/$n/report.html" --timelines "$work/loop/$n/timelines" > "$work/loop/$n/report.json" || true
  done
}
export -f loop
export grader subs work
timed "loop of test (one after another)" bash -c loop
loop_wall=$(cut -d' ' -f1 "$work/time")
awk -v b="$batch_wall" -v l="$loop_wall" -v s="$summed" -v j="$JOBS" 'BEGIN {
  printf "batch / loop: %.2f (%.1fx faster)\n", b / l, l / b
  printf "children busy: %.0f s in all, %.2f at once on average of %d slots\n", s, s / b, j
}'
