#!/usr/bin/env bash
# Method comparison on the dev split (../shared/toolbench): each method on the first N queries of every
# subset with one embedded agent model, judged by the evidence judge, with the hand labels beside it.
#
#   scripts/bench-methods.sh [N=2] [MODEL=1.5b] [METHODS="sum2act react dfsdt plan graph"]
#
# Runs come from scripts/label-runs.sh (recorded, so a rerun replays them exactly); per method the six
# subset runs are merged into target/bench-methods/<method>-<model><tag> and judged with
# `sum2act eval --judge-mode evidence --votes 1` (the judge log is the cache: a rerun costs nothing).
# Prints one row per method: answered, evidence-judge pass rate with its bootstrap 95% CI over queries,
# the hand-label pass rate and the judge's agreement on the labelled answers, unsupported claims per
# answer, parts delivered of parts asked (labels), LLM calls, tokens, tool calls and seconds per query,
# and ControlLLM's tool metrics (IR, NR, HR, CR).
#
# Environment: SUM2ACT_BIN (default: a release build), JUDGE=0.5b|1.5b (default: MODEL),
# LABEL_RUNS_TAG (as scripts/label-runs.sh; only for the methods in TAGGED_METHODS, default all),
# BENCH_METHODS_JUDGE_LOG=FILE (default target/bench-methods/judge-<judge>.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."

n="${1:-2}"
m="${2:-1.5b}"
methods="${3:-sum2act react dfsdt plan graph}"
judge_size="${JUDGE:-$m}"
data="${SUM2ACT_SHARED:-../shared/toolbench}"
root="${SUM2ACT_LABEL_RUNS:-${XDG_CACHE_HOME:-$HOME/.cache}/sum2act/label-runs}"
[ -d "$data/queries" ] || { echo "no dev split at $data (set SUM2ACT_SHARED)" >&2; exit 2; }
bin="${SUM2ACT_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin=./target/release/sum2act
fi
export SUM2ACT_BIN="$bin"
out=target/bench-methods
mkdir -p "$out"
log="${BENCH_METHODS_JUDGE_LOG:-$out/judge-$judge_size.jsonl}"
judge="$(scripts/fetch-model.sh "$judge_size")"

# All labels in one file (as scripts/bench-judge.sh does).
labels="$out/labels.json"
jq -s '{format: 2, labels: [ .[] | select(.format == 2) | (.data // "") as $d | .labels[] | {data: $d} + . ]}' \
  eval/labels/*.json > "$labels"

tag_for() {
  case " ${TAGGED_METHODS:-$methods} " in *" $1 "*) echo "${LABEL_RUNS_TAG:-}" ;; *) echo "" ;; esac
}

for method in $methods; do
  tag="$(tag_for "$method")"
  LABEL_RUNS_TAG="$tag" scripts/label-runs.sh "$n" "$m" "$method" >&2
  name="$method-$m$tag"
  rm -rf "${out:?}/$name"
  runs=()
  for q in "$data"/queries/*.json; do
    r="$root/$(basename "$q" .json)-$name"
    [ -f "$r/run.json" ] && runs+=("$r")
  done
  "$bin" --data "$data" merge "$out/$name" "${runs[@]}" >&2
  "$bin" --data "$data" eval "$out/$name" --judge "$judge" --judge-mode evidence --votes 1 \
    --judge-log "$log" --labels "$labels" --json --out "$out/$name.eval" > "$out/$name.json" 2> "$out/$name.err" || {
    echo "eval of $name failed (see $out/$name.err)" >&2; }
done

echo "agent model $m, first $n queries of each dev subset; evidence judge $judge_size, 1 vote; load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"
names=()
for method in $methods; do names+=("$out/$method-$m$(tag_for "$method")"); done
python3 scripts/method_table.py --labels "$labels" "${names[@]}"
