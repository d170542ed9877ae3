#!/usr/bin/env bash
# Benchmarks the embedded model.
#
#   scripts/bench-llm.sh [0.5b|1.5b] [extra `sum2act llm bench` flags...]
#       prefill/decode tok/s, prefix-cache reuse between router steps, grammar cost (plain vs
#       top-token-first), and aggregate throughput at concurrency 1, 2, 4, 8; JSON report in
#       target/bench-llm-<model>.json.
#
#   scripts/bench-llm.sh --reference [0.5b|1.5b] [--rounds N] [--threads N] [--spin on|off|auto]
#                        [--ref-cpu native|avx2] [--debug]
#       our prefill and decode beside plain llama.cpp's, as ratios: the same vendored llama.cpp source
#       (llama-cpp-sys-2's copy in the cargo registry) built with CMake Release (GGML_NATIVE=ON unless
#       --ref-cpu avx2, which is the instruction set our own build uses) into
#       ~/.cache/sum2act/llama-ref, timed by benches/llama_reference.cpp over llama_decode. Same model,
#       threads, prompt length, decoded tokens and wait policy (--spin off: OMP_WAIT_POLICY=PASSIVE for
#       both, the default; on: libgomp's spinning default for both; auto: ours decides with
#       --llm-spin auto, the reference spins, the target case of an idle machine). The two run interleaved, N rounds
#       (default 3), so load from other processes hits both alike; the medians are printed last.
#       --debug compares the debug build (the one scripts/demo.sh runs) instead of the release build.
#
# Builds in release mode for this machine (.cargo/config.toml: -C target-cpu=native, so llama.cpp is built
# with GGML_NATIVE=ON as by its own default; the reference's --ref-cpu native is the like-for-like case),
# fetches the model if needed.
set -euo pipefail
cd "$(dirname "$0")/.."

load() { echo "load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc) cores"; }

if [ "${1:-}" != "--reference" ]; then
    which="${1:-0.5b}"
    [ $# -gt 0 ] && shift
    model="$(scripts/fetch-model.sh "$which")"
    cargo build --release --quiet
    out="target/bench-llm-$which.json"
    load >&2
    ./target/release/sum2act llm bench --model "$model" --concurrency 1,2,4,8 --out "$out" "$@"
    echo "report: $out" >&2
    exit 0
fi
shift

which=0.5b rounds=3 threads=2 spin=off ref_cpu=native profile=release
while [ $# -gt 0 ]; do
    case "$1" in
        0.5b|1.5b) which="$1" ;;
        --rounds) rounds="${2:?--rounds needs a number}"; shift ;;
        --threads) threads="${2:?--threads needs a number}"; shift ;;
        --spin) spin="${2:?--spin needs on or off}"; shift ;;
        --ref-cpu) ref_cpu="${2:?--ref-cpu needs native or avx2}"; shift ;;
        --debug) profile=debug ;;
        *) echo "bench-llm.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
    shift
done
case "$spin" in on|off|auto) ;; *) echo "bench-llm.sh: --spin takes on, off or auto, not '$spin'" >&2; exit 2 ;; esac
case "$ref_cpu" in
    native) native=ON ;;
    avx2) native=OFF ;;
    *) echo "bench-llm.sh: --ref-cpu takes native or avx2, not '$ref_cpu'" >&2; exit 2 ;;
esac
model="$(scripts/fetch-model.sh "$which")"

# The vendored llama.cpp of the llama-cpp-sys-2 version in Cargo.lock.
version="$(awk '/^name = "llama-cpp-sys-2"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)"
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
src="$(ls -d "$registry"/*/"llama-cpp-sys-2-$version"/llama.cpp 2>/dev/null | head -1 || true)"
if [ -z "$src" ]; then
    cargo fetch --quiet
    src="$(ls -d "$registry"/*/"llama-cpp-sys-2-$version"/llama.cpp | head -1)"
fi
ref="${XDG_CACHE_HOME:-$HOME/.cache}/sum2act/llama-ref/$version-$ref_cpu"
if [ ! -f "$ref/src/libllama.a" ]; then
    echo "building plain llama.cpp $version ($ref_cpu) in $ref (a few minutes)" >&2
    mkdir -p "$(dirname "$ref")"
    cmake -S "$src" -B "$ref" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE="$native" -DBUILD_SHARED_LIBS=OFF \
        -DGGML_OPENMP=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
        -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_CURL=OFF >"$ref.log" 2>&1
    cmake --build "$ref" --target llama -j "$(nproc)" >>"$ref.log" 2>&1 || { tail -20 "$ref.log" >&2; exit 1; }
fi
timer="$ref/llama_reference"
if [ ! -x "$timer" ] || [ benches/llama_reference.cpp -nt "$timer" ]; then
    "${CXX:-g++}" -O2 -std=c++17 benches/llama_reference.cpp -I"$src/include" -I"$src/ggml/include" \
        "$ref/src/libllama.a" "$ref/ggml/src/libggml.a" "$ref/ggml/src/libggml-cpu.a" \
        "$ref/ggml/src/libggml-base.a" -fopenmp -lpthread -ldl -o "$timer"
fi

if [ "$profile" = release ]; then cargo build --release --quiet; else cargo build --quiet --bin sum2act; fi
ours="${CARGO_TARGET_DIR:-target}/$profile/sum2act"
policy=() ; [ "$spin" = off ] && policy=(OMP_WAIT_POLICY=PASSIVE)

field() { sed -n "s/.*[{,]\"$1\":\([0-9.eE+-]*\).*/\1/p"; }
run_ours() { env -u OMP_WAIT_POLICY "$ours" llm bench --quick --tokens 64 --model "$model" --llm-threads "$threads" --llm-spin "$spin"; }
run_ref() { env -u OMP_WAIT_POLICY "${policy[@]}" "$timer" "$model" prompts/llm_bench_router.md "$1" 64 "$threads" 512 512 "$2"; }

load >&2
echo "model $which, $threads threads, wait policy: $(case "$spin" in on) echo spin ;; off) echo passive ;; auto) echo "ours auto, reference spin" ;; esac), ours: $profile build, reference: $ref_cpu" >&2
printf '%-6s %14s %14s %8s %14s %14s %8s\n' round ours_prefill ref_prefill ratio ours_decode ref_decode ratio
results=()
for r in $(seq "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then
        o="$(run_ours)"
        n_prompt="$(field prompt_tokens <<<"$o")"; n_ctx="$(field decode_prompt_tokens <<<"$o")"
        x="$(run_ref "$n_prompt" "$n_ctx")"
    else
        x="$(run_ref "${n_prompt:-695}" "${n_ctx:-31}")"
        o="$(run_ours)"
    fi
    line="$(awk -v op="$(field prefill_tok_s <<<"$o")" -v rp="$(field prefill_tok_s <<<"$x")" \
        -v od="$(field decode_tok_s <<<"$o")" -v rd="$(field decode_tok_s <<<"$x")" \
        'BEGIN { printf "%14.1f %14.1f %8.2f %14.1f %14.1f %8.2f", op, rp, op / rp, od, rd, od / rd }')"
    printf '%-6s %s\n' "$r" "$line"
    results+=("$line")
done
printf '%s\n' "${results[@]}" | awk '
    { p[NR] = $3; d[NR] = $6
      if ($1 > op) op = $1; if ($2 > rp) rp = $2; if ($4 > od) od = $4; if ($5 > rd) rd = $5 }
    function median(a, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
        printf "median ratio (ours / reference): prefill %.2f, decode %.2f\n", median(p, NR), median(d, NR)
        # Other processes only slow a run down: the fastest round of each side is the least disturbed.
        printf "best of all rounds, ours / reference: prefill %.2f, decode %.2f\n", op / rp, od / rd
    }'
echo "reference $(sed -n 's/.*"system_info":"\([^"]*\)".*/\1/p' <<<"$x")" >&2
load >&2
