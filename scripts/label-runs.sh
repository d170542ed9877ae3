#!/usr/bin/env bash
# Regenerates the runs whose answers are hand-labelled in eval/labels/ (dev split, ../shared/toolbench):
# every subset × method × embedded model, the first N queries of each subset. Answer files quote the
# benchmark, so they stay out of the repository: they go to ${SUM2ACT_LABEL_RUNS:-~/.cache/sum2act/label-runs}.
# The first run records every LLM call beside them (rec/); later runs replay the recordings, so the
# answers (and their hashes in the label files) come back exactly. A larger N later records the new
# queries' calls into the same recordings (the finished answers are resumed, not rerun).
# `sum2act eval RUN --labels FILE` reports any label whose answer hash no longer matches as stale.
#
#   scripts/label-runs.sh [N=2] [MODELS=0.5b 1.5b] [METHODS=sum2act react dfsdt]
#
# Environment: SUM2ACT_BIN=PATH runs that binary instead of a fresh release build (the debug build runs
# llama.cpp at the same speed); LABEL_RUNS_CONCURRENCY=C episodes in flight (default 1; the embedded model
# batches them, and replays are exact either way); LABEL_RUNS_TAG=-x appends -x to every run name (a new
# generation beside older labelled runs, e.g. after the agent changed).
set -euo pipefail
cd "$(dirname "$0")/.."

n="${1:-2}"
models="${2:-0.5b 1.5b}"
methods="${3:-sum2act react dfsdt}"
data="${SUM2ACT_SHARED:-../shared/toolbench}"
root="${SUM2ACT_LABEL_RUNS:-${XDG_CACHE_HOME:-$HOME/.cache}/sum2act/label-runs}"
[ -d "$data/queries" ] || { echo "no dev split at $data (set SUM2ACT_SHARED)" >&2; exit 2; }
bin="${SUM2ACT_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin=./target/release/sum2act
fi
concurrency="${LABEL_RUNS_CONCURRENCY:-1}"
mkdir -p "$root/rec"
for m in $models; do
  model="$(scripts/fetch-model.sh "$m")"
  for method in $methods; do
    for q in "$data"/queries/*.json; do
      subset="$(basename "$q" .json)"
      name="$subset-$method-$m${LABEL_RUNS_TAG:-}"
      rec="$root/rec/$name"
      # Replay when there are recordings and nothing new to run; record when the run lacks answers it
      # already has (a larger N): finished answers are resumed, the new episodes' calls added to $rec.
      have=$( (find "$root/$name/$subset" -name '*.json' 2>/dev/null || true) | wc -l)
      if [ -d "$rec" ] && [ -n "$(ls -A "$rec")" ] && { [ "$have" -ge "$n" ] || [ "$have" -eq 0 ]; }; then
        llm=(--replay "$rec")
      else
        llm=(--record "$rec")
      fi
      echo "== $name (${llm[0]})" >&2
      "$bin" --data "$data" batch --subsets "$subset" --limit "$n" --method "$method" --model "$model" \
        --concurrency "$concurrency" --progress plain --out "$root/$name" "${llm[@]}"
    done
  done
done
echo "runs: $root (label them in eval/labels/, then scripts/bench-judge.sh)" >&2
