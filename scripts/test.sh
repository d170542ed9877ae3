#!/usr/bin/env bash
# The test suite, and all CI runs: installs build dependencies if missing, checks formatting, then builds
# and runs every unit and integration test with clippy's lints (`-D warnings`) applied to our crate in
# the same build. No test needs the model weights or the network.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --browser
cargo fmt --check
# CI builds our crates from scratch, where incremental compilation only writes caches nobody reads: a third
# of the build on 2 cores. Set CARGO_INCREMENTAL=1 to keep them between local runs of this script.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
if driver="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)"; then
  # clippy-driver compiles our crates exactly as rustc would, plus the lints; dependencies build as usual.
  # `cargo clippy` instead would check every dependency again (minutes on 2 cores).
  export RUSTC_WORKSPACE_WRAPPER="$driver"
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
else
  echo "test: clippy-driver not found; the tests run without lints" >&2
fi
cargo test --benches --no-run --quiet # benchmarks are compiled (and linted), not run
cargo test
