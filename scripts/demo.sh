#!/usr/bin/env bash
# The main job on the embedded defaults: Sum2Act over the shipped sample's G1 queries with the local
# model and the embedded tool server, judged by the local model, then the result table and an HTML
# report. Set SUM2ACT_DEMO_LIMIT to run more queries per subset.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/fetch-model.sh
cargo build --quiet --bin sum2act
bin=target/debug/sum2act
out="runs/demo-$(date +%Y%m%d-%H%M%S)"
"$bin" batch --subsets G1_instruction --limit "${SUM2ACT_DEMO_LIMIT:-6}" --method sum2act --concurrency 2 --out "$out" --eval
"$bin" report "$out" --out "$out/report.html"
echo "answers, evaluation and report: $out"
