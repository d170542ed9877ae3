#!/usr/bin/env bash
# Installs the system packages sum2act needs to build (llama.cpp is compiled from vendored source), the
# programs and data the media server runs (`sum2act media-server`: tesseract OCR with English data,
# espeak-ng, pocketsphinx with its US English model, the DejaVu font) and, with --browser, Chromium for
# the HTML report test, and xz/python3 for the reference runs' replay. Safe to run again: it installs only what is missing.
set -euo pipefail

want=(cmake clang libclang-dev pkg-config libssl-dev)
want+=(xz-utils python3) # the strong-model reference runs are .tar.xz; their replay compares with python3
want+=(tesseract-ocr tesseract-ocr-eng espeak-ng pocketsphinx pocketsphinx-en-us fonts-dejavu-core)
if [[ "${1:-}" == "--browser" ]]; then
  want+=(chromium)
fi

missing=()
for pkg in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust from https://rustup.rs" >&2; exit 1; }
