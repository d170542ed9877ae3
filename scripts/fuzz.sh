#!/usr/bin/env bash
# Runs each fuzz target (src/fuzz/targets.rs) for a time budget on the stable toolchain: a seeded
# generation-and-mutation fuzzer built into the test binary, no nightly or cargo-fuzz needed.
#
#   scripts/fuzz.sh                 # 600 s per target (the reference run)
#   FUZZ_SECS=120 scripts/fuzz.sh   # shorter
#   FUZZ_SEED=7 scripts/fuzz.sh actions gbnf   # some targets, another seed
#
# Prints one line per target (cases, crashes, seconds, seed, slowest case in ms) and writes crashing
# inputs to target/fuzz/crashes/. Exit status 1 when any target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${FUZZ_SECS:-600}"
seed="${FUZZ_SEED:-$(date +%s)}"
out="${CARGO_TARGET_DIR:-target}/fuzz"
mkdir -p "$out/crashes"
report="$out/report-$seed.tsv"
: > "$report"

declare -A tests=(
  [actions]=fuzz_model_output_actions
  [cut_finish]=fuzz_cut_finish_salvage
  [pyrepr]=fuzz_python_repr_cache_keys
  [loaders]=fuzz_query_tool_and_answer_loaders
  [virtual]=fuzz_virtual_requests
  [gbnf]=fuzz_json_schema_to_gbnf
)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(actions cut_finish pyrepr loaders virtual gbnf)
fi

# Build once, then run the test binary itself for each target (a copy, so rebuilding the crate
# meanwhile does not change what is being fuzzed).
bin=$(cargo test -p sum2act --lib --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
if [ -z "$bin" ]; then
  echo "could not build the test binary" >&2
  exit 2
fi
cp "$bin" "$out/fuzz-bin"
failed=0
for t in "${targets[@]}"; do
  name="${tests[$t]:-}"
  if [ -z "$name" ]; then
    echo "unknown target $t (known: ${!tests[*]})" >&2
    exit 2
  fi
  echo "== $t: ${secs}s, seed $seed" >&2
  if ! SUM2ACT_FUZZ_SECS="$secs" SUM2ACT_FUZZ_SEED="$seed" SUM2ACT_FUZZ_REPORT="$report" \
       SUM2ACT_FUZZ_DIR="$out/crashes" \
       "$out/fuzz-bin" "fuzz::targets::$name" --exact --test-threads 1 >"$out/$t.log" 2>&1; then
    failed=1
    echo "   crashed: see $out/$t.log" >&2
  fi
done
echo "target	cases	crashes	seconds	seed	slowest_ms"
cat "$report"
exit $failed
