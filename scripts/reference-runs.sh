#!/usr/bin/env bash
# Strong-model reference runs: record them through a by-hand endpoint (readers playing a strong model,
# docs/strong-model.md), judge them, pack them into eval/reference/strong/SET.tar.gz, and replay them offline.
#
#   scripts/reference-runs.sh record SET [METHODS]      every method at once, one shared world (needs BY_HAND_URL)
#   scripts/reference-runs.sh judge  SET MODE [METHODS] `eval` with --judge-mode MODE (needs BY_HAND_URL)
#   scripts/reference-runs.sh pack   SET                 work folder -> eval/reference/strong/SET.tar.gz
#   scripts/reference-runs.sh unpack SET                 the reverse (before recording more)
#   scripts/reference-runs.sh rebuild SET [METHODS]     the answers again from the recordings with this binary
#   scripts/reference-runs.sh replay SET [METHODS]      offline: replays runs and judges, diffs answers and verdicts
#   scripts/reference-runs.sh table  SET [METHODS]      the replay, then the method table from what it produced
#                                                        (labels: eval/labels/strong_SET*.json; REF_HALF=tune|report|all)
#
# SET: equal (../shared/toolbench, queries 9-16 of every subset: the report half no change was made for, all
# five methods under the one budget, and react/dfsdt again under ToolBench's published settings as
# `react@toolbench`, `dfsdt@toolbench`, all in one world), dev (the first REF_N=8 queries of every subset,
# recorded before the one budget; `world` is the same queries in a world of its own: the simulated-world
# consistency run of react and plan), sample (the shipped sample's G1_instruction), mixed (the shipped
# sample's media subset, with the media tool server over MCP), de and fr (six dev requests translated, their
# queries in the archive: Sum2Act in rounds in German and French).
# METHODS default: sum2act react dfsdt plan graph (equal: and sum2act@rounds sum2act@lean react@toolbench
# dfsdt@toolbench); a run is METHOD or METHOD@VARIANT (`--budget VARIANT`; `rounds`: Sum2Act in rounds, the
# default since issue 43, while a plain `sum2act` run is its step loop, `--steps`; `lean`: the step loop's cost
# options). MODE: evidence or tooleval.
#
# Environment: REF_JUDGE=0 (replay the answers, not the judge: the world, sample and mixed sets were judged
# before the judge of issue 41; the equal and dev sets' judges replay), BY_HAND_URL (e.g. http://127.0.0.1:8091/v1, the
# `serve-llm --by-hand` endpoint), SUM2ACT_BIN
# (default: a debug build), REF_WORK (work folder, default runs/reference), REF_N, REF_CONCURRENCY (episodes
# in flight per method, default 4), SUM2ACT_SHARED (default ../shared/toolbench).
#
# Recording resumes: finished episodes are kept, a larger REF_N adds only the new queries (their calls are
# recorded into the same folders). Every method meets the same simulated world (`--world`): the same call
# gets the same reply whichever method makes it first.
set -euo pipefail
cd "$(dirname "$0")/.."

action="${1:?usage: scripts/reference-runs.sh record|judge|pack|unpack|replay SET ...}"
set_name="${2:?which set: dev, world, sample or mixed}"
shift 2
work="${REF_WORK:-runs/reference}/$set_name"
archive="eval/reference/strong/$set_name.tar.xz"
bin="${SUM2ACT_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --quiet --bin sum2act
  bin=target/debug/sum2act
fi

# The dev split's queries FROM+1..FROM+N of every subset as a data folder of their own (the tools and the
# response cache are the shared ones): `batch` then runs them all.
slice_data() { # DEST FROM N
  python3 - "$data" "$1" "$2" "$3" <<'PY'
import json, os, sys
src, dest, start, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
os.makedirs(os.path.join(dest, "queries"), exist_ok=True)
for name in ("tools", "response_cache"):
    link = os.path.join(dest, name)
    if os.path.isdir(os.path.join(src, name)) and not os.path.lexists(link):
        os.symlink(os.path.abspath(os.path.join(src, name)), link)
for f in sorted(os.listdir(os.path.join(src, "queries"))):
    if f.endswith(".json"):
        queries = json.load(open(os.path.join(src, "queries", f)))
        json.dump(queries[start:start + n], open(os.path.join(dest, "queries", f), "w"))
PY
}

case "$set_name" in
  equal)
    data="${SUM2ACT_SHARED:-../shared/toolbench}"
    [ -d "$data/queries" ] || { echo "reference-runs: no dev split at $data (set SUM2ACT_SHARED)" >&2; exit 2; }
    select=()
    tools=() ;;
  dev|world)
    data="${SUM2ACT_SHARED:-../shared/toolbench}"
    [ -d "$data/queries" ] || { echo "reference-runs: no dev split at $data (set SUM2ACT_SHARED)" >&2; exit 2; }
    subsets="G1_instruction,G1_category,G1_tool,G2_instruction,G2_category,G3_instruction"
    # Replays take the number of queries the recording was made with.
    n="${REF_N:-$(cat "$work/limit" 2>/dev/null || echo 8)}"
    select=(--subsets "$subsets" --limit "$n")
    tools=() ;;
  sample)
    data=toolbench/sample
    select=(--subsets G1_instruction)
    tools=() ;;
  de|fr)
    # Six dev requests (queries 1-8 of their subsets) translated into German or French, their queries
    # in the archive, their tools the dev split's: does Sum2Act's checklist hold in another language?
    shared="${SUM2ACT_SHARED:-../shared/toolbench}"
    [ -d "$shared/tools" ] || { echo "reference-runs: no dev split at $shared (set SUM2ACT_SHARED)" >&2; exit 2; }
    data="$work/data"
    select=()
    tools=() ;;
  mixed)
    data=toolbench/sample
    select=(--subsets M1_media)
    tools=(--tools query+mcp --mcp "$bin media-server") ;;
  *) echo "reference-runs: unknown set '$set_name' (dev, world, sample, mixed)" >&2; exit 2 ;;
esac

methods_or_default() {
  if [ "$set_name" = de ] || [ "$set_name" = fr ]; then
    echo "${1:-sum2act@rounds}"
  elif [ "$set_name" = equal ]; then
    echo "${1:-sum2act@rounds sum2act sum2act@lean react dfsdt plan graph react@toolbench dfsdt@toolbench}"
  else
    echo "${1:-sum2act react dfsdt plan graph}"
  fi
}

# The budget flags of a run: METHOD@BUDGET names its preset; the sets recorded before the one budget
# replay with the settings they were recorded under (ReAct and DFSDT: ToolBench's; the planners: no
# assumed inputs).
budget_flags() { # RUN
  local run="$1"
  case "$run" in
    # Sum2Act with issue 43's cost options: small plain results folded by code, the tools' docs only in
    # the offered functions (measured: fewer tokens, fewer queries solved; not the default).
    *@lean) echo --steps --fold-chars 1200 --tool-docs schemas; return ;;
    # Sum2Act in rounds (issue 43): one model call per round, the state manager and the router in one
    # (the default since); a plain `sum2act` run was recorded with the paper's step loop (`--steps`).
    *@rounds) return ;;
    sum2act) echo --steps ;;
    *@*) echo --budget "${run#*@}"; return ;;
  esac
  [ "$set_name" = equal ] && return
  case "$run" in
    react|dfsdt) echo --budget toolbench ;;
    plan|graph) echo --assume-missing off ;;
  esac
}
endpoint() {
  [ -n "${BY_HAND_URL:-}" ] || { echo "reference-runs: set BY_HAND_URL to the serve-llm --by-hand endpoint" >&2; exit 2; }
  # Readers may take minutes: no LLM timeout the harness would cause (docs/strong-model.md).
  echo --base-url "$BY_HAND_URL" --model strong --llm-timeout 86400
}

batch() { # batch RUN OUT LLM-FLAGS...
  local run="$1" out="$2"
  shift 2
  "$bin" --data "$data" batch "${select[@]}" "${tools[@]}" --method "${run%@*}" $(budget_flags "$run") \
    --tool-simulation llm --world "$work/world" --concurrency "${REF_CONCURRENCY:-4}" --progress plain \
    --out "$out" "$@"
}

judge() { # judge METHOD MODE OUT LLM-FLAGS...
  local method="$1" mode="$2" out="$3"
  shift 3
  "$bin" --data "$data" eval "$work/runs/$method" --judge-mode "$mode" --votes 1 --judge-concurrency 4 --json \
    --out "$out" "$@"
}

# Answers and figures without what no replay can repeat (wall-clock times, paths, the overlap of
# concurrent calls, retries after a live tool was slow) and what the calibration registry adds (the
# judge's measured agreement, trust).
normalise_py='
import json, os, re, sys
def strip(v):
    if isinstance(v, str):
        # A file an episode produced is named by where that run'"'"'s answers were written.
        return re.sub(r"^.*/([^/]+\.resources/[^/]+)$", r"\1", v)
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in ("wall_ms", "elapsed_ms", "seconds", "wall_s", "started", "finished", "avg_s", "start_ms", "end_ms", "calls_ms", "overlaps", "retries", "log", "source", "agreement", "trusted")}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
def normalised(path):
    return json.dumps(strip(json.load(open(path))), sort_keys=True, indent=1)
'
normalised() {
  python3 -c "$normalise_py"'
print(normalised(sys.argv[1]))' "$1"
}

compare_answers() { # EXPECTED ACTUAL: every answer file of EXPECTED, the same in ACTUAL (times aside)
  # One python for all the files: a start per file was most of a replay's time on 2 cores.
  python3 -c "$normalise_py"'
expected, actual = sys.argv[1:3]
bad = 0
files = sorted("./" + os.path.relpath(os.path.join(d, f), expected) for d, _, fs in os.walk(expected)
               for f in fs if re.fullmatch(r".*_.*\.json", f) and os.path.relpath(d, expected) != ".")
for f in files:
    try:
        same = normalised(os.path.join(expected, f)) == normalised(os.path.join(actual, f))
    except (OSError, ValueError):
        same = False
    if not same:
        print("  differs: " + f, file=sys.stderr)
        bad = 1
sys.exit(bad)' "$1" "$2"
}

compare_figures() { # EXPECTED ACTUAL: the judge's verdicts and pass rates, the same
  local expected="$1" actual="$2"
  diff "$expected/verdicts.csv" "$actual/verdicts.csv" >&2 &&
    diff <(normalised "$expected/pass_rate.json") <(normalised "$actual/pass_rate.json") >&2
}

replay_method() { # METHOD: replays its run and judges from $tmp, compares; messages on stderr
  local method="$1" status=0 mode mode_dir
  batch "$method" "$out/runs/$method" --model strong --replay "$tmp/rec/$method" > "$tmp/$method.log" 2>&1 || {
    echo "replay of $method failed:" >&2; tail -n 5 "$tmp/$method.log" >&2; return 1; }
  if compare_answers "$tmp/runs/$method" "$out/runs/$method"; then
    echo "$method: answers replay exactly" >&2
  else
    echo "$method: answers differ from the strong-model recording (a prompt or agent change): re-record with" \
      "readers, scripts/reference-runs.sh record $set_name $method (docs/strong-model.md)" >&2
    status=1
  fi
  # REF_JUDGE=0: answers only (a set whose judge was recorded with judge prompts since changed).
  [ "${REF_JUDGE:-1}" = 0 ] && return "$status"
  for mode_dir in "$tmp"/judge-rec/*/; do
    [ -d "$mode_dir$method" ] || continue
    mode="$(basename "$mode_dir")"
    judge "$method" "$mode" "$out/judge/$mode/$method" --model strong --replay "$mode_dir$method" > /dev/null 2>&1 || true
    if compare_figures "$tmp/judge/$mode/$method" "$out/judge/$mode/$method"; then
      echo "$method: $mode judge verdicts replay exactly" >&2
    else
      echo "$method: $mode judge verdicts differ from the recording (a judge prompt or rule change)" >&2
      status=1
    fi
  done
  return "$status"
}

case "$action" in
  record)
    args=($(endpoint))
    mkdir -p "$work/world" "$work/rec" "$work/runs"
    if [ "$set_name" = equal ]; then slice_data "$work/data" 8 8; data="$work/data"; fi
    [ -n "${n:-}" ] && echo "$n" > "$work/limit"
    if [ -n "${shared:-}" ] && [ ! -e "$data/tools" ]; then ln -s "$(cd "$shared" && pwd)/tools" "$data/tools"; fi
    pids=()
    for method in $(methods_or_default "${1:-}"); do
      batch "$method" "$work/runs/$method" "${args[@]}" --record "$work/rec/$method" \
        > "$work/$method.log" 2>&1 &
      pids+=($!)
    done
    status=0
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    tail -n 4 "$work"/*.log
    exit "$status" ;;
  rebuild)
    # The answers again from the recordings, with this binary (no reader): after a change that alters the
    # answer files' record but not what the model was asked (a replay that misses a request fails).
    [ "$set_name" = equal ] && { slice_data "$work/data" 8 8; data="$work/data"; }
    for method in $(methods_or_default "${1:-}"); do
      [ -d "$work/rec/$method" ] || continue
      rm -rf "$work/runs/$method.new"
      batch "$method" "$work/runs/$method.new" --model strong --replay "$work/rec/$method" > "$work/$method.rebuild.log" 2>&1 ||
        { echo "rebuild of $method failed:" >&2; tail -n 5 "$work/$method.rebuild.log" >&2; exit 1; }
      rm -rf "$work/runs/$method" && mv "$work/runs/$method.new" "$work/runs/$method"
      echo "$method: rebuilt from its recording" >&2
    done ;;
  judge)
    mode="${1:?which judge mode: evidence or tooleval}"
    args=($(endpoint))
    [ "$set_name" = equal ] && data="$work/data"
    mkdir -p "$work/judge/$mode" "$work/judge-rec/$mode"
    pids=()
    for method in $(methods_or_default "${2:-}"); do
      ( judge "$method" "$mode" "$work/judge/$mode/$method" "${args[@]}" \
        --record "$work/judge-rec/$mode/$method" > "$work/judge/$mode-$method.json" 2> "$work/judge/$mode-$method.log" ||
        { echo "eval of $method failed:" >&2; tail -n 3 "$work/judge/$mode-$method.log" >&2; exit 1; } ) &
      pids+=($!)
    done
    status=0
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    exit "$status" ;;
  pack)
    mkdir -p "$(dirname "$archive")"
    # The figures a replay is compared with, not the judge's log (judge-rec holds its replies) or converted copies.
    tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --exclude='*.log' --exclude=./data \
      --exclude='judge_log.jsonl' --exclude='converted' --exclude='*.lock' --exclude='.lock' -cJf "$archive" .
    ls -l "$archive" ;;
  unpack)
    mkdir -p "$work"
    tar -C "$work" -xJf "$archive" ;;
  replay|table)
    tmp="$(mktemp -d)"
    [ -n "${REF_KEEP:-}" ] && echo "replay folder kept: $tmp" >&2 || trap 'rm -rf "$tmp"' EXIT
    tar -C "$tmp" -xJf "$archive"
    work="$tmp"
    n="$(cat "$tmp/limit" 2>/dev/null || echo "${n:-8}")"
    [ "$set_name" = dev ] && select=(--subsets "$subsets" --limit "$n")
    if [ "$set_name" = equal ]; then slice_data "$tmp/data" 8 8; data="$tmp/data"; fi
    if [ -n "${shared:-}" ]; then
      data="$tmp/data"
      ln -s "$(cd "$shared" && pwd)/tools" "$data/tools"
    fi
    out="$tmp/replayed"
    # The methods replay side by side (they only read the recorded world); reports print in order.
    pids=(); methods=()
    for method in $(methods_or_default "${1:-}"); do
      [ -d "$tmp/rec/$method" ] || continue
      replay_method "$method" 2> "$tmp/$method.report" &
      pids+=($!); methods+=("$method")
    done
    status=0
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}" || status=1
      cat "$tmp/${methods[$i]}.report" >&2
    done
    if [ "$action" = table ]; then
      labels=(); for f in eval/labels/strong_"$set_name"*.json; do [ -f "$f" ] && labels+=(--labels "$f"); done
      python3 scripts/reference_table.py --work "$out" "${labels[@]}" --data "$data" --half "${REF_HALF:-all}" \
        --methods "$(methods_or_default "${1:-}")" --bin "$bin" ${REF_ALLOW_DIFFERENCES:+--allow-differences}
    fi
    exit "$status" ;;
  *) echo "reference-runs: unknown action '$action'" >&2; exit 2 ;;
esac
