#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit tests, and the functional tests that start
# their own PouchDB Server (installed here from package-lock.json if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pouchdb-server.sh
install_pouchdb_server
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --release --quiet
