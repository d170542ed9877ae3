#!/usr/bin/env bash
# Judge calibration benchmark: agreement and Cohen's kappa of both judge modes (`evidence`, `tooleval`)
# with the hand labels in eval/labels, per embedded judge model, and the judge's cost per answer
# (LLM calls, tokens, seconds).
#
#   scripts/bench-judge.sh [0.5b] [1.5b]        (default: every fetched embedded model)
#
# Environment: SUM2ACT_BIN=PATH judges with that binary instead of a fresh release build;
# BENCH_JUDGE_MODES="evidence" limits the modes (default "evidence tooleval"); BENCH_JUDGE_ARGS="--votes 1"
# passes extra flags to every `eval` (say so when you report such figures); BENCH_JUDGE_LOG=FILE makes
# every run share one judge log (the cache is keyed by content, so votes made elsewhere, e.g. by
# scripts/bench-methods.sh, are reused; the cost columns then average over every call in that log).
#
# Runs judged: the shipped reference run(s) in eval/reference, and the labelled dev-split runs under
# ${SUM2ACT_LABEL_RUNS:-~/.cache/sum2act/label-runs} (scripts/label-runs.sh regenerates them). Labels
# apply only to the answer they were made for (subset, id, method, model, answer hash); stale ones are
# counted, not scored. Judge logs are kept under target/bench-judge, so a rerun only pays for new votes.
set -euo pipefail
cd "$(dirname "$0")/.."

models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for m in 0.5b 1.5b; do
    f="${XDG_CACHE_HOME:-$HOME/.cache}/sum2act/models/qwen2.5-coder-$m-instruct-q4_k_m.gguf"
    [ -f "$f" ] && models+=("$m")
  done
fi
[ ${#models[@]} -gt 0 ] || { echo "no embedded model fetched: run scripts/fetch-model.sh" >&2; exit 2; }

bin="${SUM2ACT_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet
  bin=./target/release/sum2act
fi
read -r -a extra <<< "${BENCH_JUDGE_ARGS:-}"
out=target/bench-judge
mkdir -p "$out"
runs_root="${SUM2ACT_LABEL_RUNS:-$HOME/.cache/sum2act/label-runs}"
runs=(eval/reference/*/)
[ -d "$runs_root" ] && for r in "$runs_root"/*/; do [ -f "$r/run.json" ] && runs+=("$r"); done

# All labels in one file (format 2 entries; old-format files are converted without method/model/hash).
labels="$out/labels.json"
jq -s '{format: 2, labels: [ .[] | if .format == 2 then (.data // "") as $d | .labels[] | {data: $d} + . else to_entries[] |
        {subset: (.key | split("/") | if length > 1 then .[0] else "" end),
         query_id: (.key | split("/") | .[-1] | tonumber), label: .value} end ]}' eval/labels/*.json > "$labels"

echo "load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc) cores; ${#runs[@]} run(s)" >&2
printf '%-6s %-9s %5s %10s %7s %6s %8s %11s %10s %9s\n' model mode n agreement kappa stale unusable "calls/ans" "tokens/ans" "s/ans"
for m in "${models[@]}"; do
  model="$(scripts/fetch-model.sh "$m")"
  for mode in ${BENCH_JUDGE_MODES:-evidence tooleval}; do
    dir="$out/$m/$mode"
    mkdir -p "$dir"
    for run in "${runs[@]}"; do
      name="$(basename "$run")"
      "$bin" eval "$run" --judge "$model" --judge-mode "$mode" --labels "$labels" --json \
        --out "$dir/$name" --judge-log "${BENCH_JUDGE_LOG:-$dir/$name/judge_log.jsonl}" "${extra[@]}" > "$dir/$name.json" 2> "$dir/$name.err" || true
    done
    # Pooled over runs: agreement and kappa (a judge Unsure always disagrees), stale labels, cost.
    jq -rs --arg m "$m" --arg mode "$mode" '
      [ .[] | .pairs[]? ] as $p | ($p | length) as $n |
      ([ .[] | .stale[]? ] | length) as $stale |
      if $n == 0 then "\($m) \($mode) 0 labelled answers matched" else
      ([ $p[] | select(.[1] == .[2]) ] | length) as $agree |
      ([ $p[] | select(.[1] == "Solved") ] | length / $n) as $hs |
      ([ $p[] | select(.[2] == "Solved") ] | length / $n) as $js |
      ([ $p[] | select(.[2] == "Unsolved") ] | length / $n) as $ju |
      ($agree / $n) as $po | ($hs * $js + (1 - $hs) * $ju) as $pe |
      (if (1 - $pe) < 1e-12 then (if $po == 1 then 1 else 0 end) else ($po - $pe) / (1 - $pe) end) as $k |
      "\($m) \($mode) \($n) \($po * 100 | . * 10 | round / 10)% \($k * 100 | round / 100) \($stale)" end
    ' "$dir"/*/label_matching.json 2>/dev/null | while read -r a b n agr k st rest; do
      logs=("$dir"/*/judge_log.jsonl); [ -n "${BENCH_JUDGE_LOG:-}" ] && logs=("$BENCH_JUDGE_LOG")
      cost=$(cat "${logs[@]}" 2>/dev/null | jq -rs '
        (map(.query) | unique | length) as $q | if $q == 0 then "- - -" else
        "\(length / $q * 10 | round / 10) \(map(.prompt_tokens + .completion_tokens) | add / $q | round) \(map(.elapsed_ms) | add / $q / 100 | round / 10)" end')
      unusable=$(jq -s '[.[] | .pass_rate.overall.unusable_votes // 0] | add' "$dir"/*.json 2>/dev/null || echo "?")
      printf '%-6s %-9s %5s %10s %7s %6s %8s %11s %10s %9s\n' "$a" "$b" "$n" "$agr" "$k" "$st" "$unusable" $cost
    done
  done
done
echo "per-run reports and judge logs: $out" >&2
