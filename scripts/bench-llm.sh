#!/usr/bin/env bash
# Benchmarks the embedded model: prefill/decode tok/s, prefix-cache reuse between router steps, grammar
# cost (plain vs top-token-first), and aggregate throughput at concurrency 1, 2, 4, 8.
#
#   scripts/bench-llm.sh [0.5b|1.5b] [extra `sum2act llm bench` flags...]
#
# Builds in release mode (never with -C target-cpu=native: llama.cpp's AMX path crashes on these CPUs),
# fetches the model if needed, and writes the JSON report to target/bench-llm-<model>.json.
set -euo pipefail
cd "$(dirname "$0")/.."

which="${1:-0.5b}"
[ $# -gt 0 ] && shift
model="$(scripts/fetch-model.sh "$which")"
cargo build --release --quiet
out="target/bench-llm-$which.json"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc) cores" >&2
./target/release/sum2act llm bench --model "$model" --concurrency 1,2,4,8 --out "$out" "$@"
echo "report: $out" >&2
