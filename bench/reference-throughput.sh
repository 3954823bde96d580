#!/usr/bin/env bash
# Throughput of isr-reference on a generated trace of N commands (default 5,000,000), compared in
# the same run with `wc -l` on the same file. Prints MB/s and commands/s.
# Usage: bench/reference-throughput.sh [COMMANDS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5000000}
cargo build --release -q -p isr-reference --bin isr-reference --example big_trace
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
./target/release/examples/big_trace "$n" > "$dir/big.trace"
bytes=$(stat -c %s "$dir/big.trace")
best() { # best of 3 wall-clock seconds of "$@"
  local b=999
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
    b=$(echo "$e - $s" | bc -l | awk -v b="$b" '{print ($1 < b) ? $1 : b}')
  done
  echo "$b"
}
ref=$(best ./target/release/isr-reference "$dir/big.trace")
wcl=$(best wc -l "$dir/big.trace")
fault=$(best ./target/release/isr-reference --fault caught-up-equality-only "$dir/big.trace")
awk -v n="$n" -v bytes="$bytes" -v r="$ref" -v w="$wcl" -v f="$fault" 'BEGIN {
  mb = bytes / 1e6
  printf "trace: %d commands, %.1f MB\n", n, mb
  printf "isr-reference:            %.3f s  %7.0f MB/s  %6.1f M commands/s\n", r, mb / r, n / r / 1e6
  printf "isr-reference --fault ..: %.3f s  %7.0f MB/s  %6.1f M commands/s\n", f, mb / f, n / f / 1e6
  printf "wc -l:                    %.3f s  %7.0f MB/s\n", w, mb / w
}'
