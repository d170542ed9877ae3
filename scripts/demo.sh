#!/usr/bin/env bash
# The main job on the embedded defaults, then what the harness does with a strong model:
#  1. live: Sum2Act over the shipped sample's G1 queries with the local model and the embedded tool server,
#     judged by the local model (one vote: six queries buy nothing from a majority), the result table and an
#     HTML report;
#  2. replayed: a strong-model reference run (all five methods, recorded with readers playing a GPT-4-class
#     model, docs/strong-model.md) through the real harness offline, and its labelled method table: the
#     equal-budget set (48 dev queries, where the methods differ) when ../shared/toolbench is beside the
#     checkout, else the shipped sample's six queries (scripts/reference-runs.sh table equal|sample).
# Set SUM2ACT_DEMO_LIMIT to run more queries live; SUM2ACT_DEMO_SKIP_REPLAY=1 skips part 2.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/fetch-model.sh
cargo build --quiet --bin sum2act
bin=target/debug/sum2act
out="runs/demo-$(date +%Y%m%d-%H%M%S)"
"$bin" batch --subsets G1_instruction --limit "${SUM2ACT_DEMO_LIMIT:-6}" --method sum2act --concurrency 2 \
  --out "$out" --eval --votes 1
"$bin" report "$out" --out "$out/report.html"
echo "answers, evaluation and report: $out"
if [ -z "${SUM2ACT_DEMO_SKIP_REPLAY:-}" ]; then
  echo
  if [ -d "${SUM2ACT_SHARED:-../shared/toolbench}/queries" ]; then
    echo "== Sum2Act (in rounds, and its step loop) and four other methods under one budget with a strong model, 48 dev queries (recorded; replayed offline through this build) =="
    SUM2ACT_BIN="$bin" scripts/reference-runs.sh table equal
  else
    echo "== The same queries with a strong model (recorded; replayed offline through this build) =="
    echo "(the shipped sample: every method solves these six; with ../shared/toolbench the demo replays 48 dev queries that tell the methods apart)"
    SUM2ACT_BIN="$bin" REF_JUDGE=0 scripts/reference-runs.sh table sample
  fi
fi
