#!/usr/bin/env bash
# Times scripts/demo.sh as the README states its figure: model fetched and project built first (not
# timed), then the demo alone, wall clock, with the machine's load beside it. Prints one line to paste
# into the README, and keeps the demo's output in target/time-demo.log.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
scripts/fetch-model.sh >/dev/null
cargo build --quiet --bin sum2act
load_before="$(cut -d' ' -f1 /proc/loadavg)"
start=$(date +%s.%N)
scripts/demo.sh > target/time-demo.log 2>&1
live_end="$(grep -m1 -o 'wall [0-9.]* s' target/time-demo.log || true)"
end=$(date +%s.%N)
total=$(python3 -c "print(f'{$end - $start:.0f}')")
echo "demo: ${total} s in all on $(nproc) cores (load before ${load_before}); live batch ${live_end:-wall ?}; $(git rev-parse --short HEAD 2>/dev/null || echo unknown); scripts/time-demo.sh"
