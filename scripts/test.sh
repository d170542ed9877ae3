#!/usr/bin/env bash
# The test suite: installs build dependencies if missing, then runs every unit and integration test.
# No test needs the model weights or the network.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --browser
cargo test
