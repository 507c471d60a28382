#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit tests, and the functional tests that start
# their own PouchDB Server (installed here from package-lock.json if missing). The HTML
# report test renders the report in headless Chromium (Debian's package, installed here
# if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pouchdb-server.sh
install_pouchdb_server

install_chromium() {
  if [ -x /usr/bin/chromium ]; then
    return 0
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "headless Chromium is missing: install Debian's chromium package (the HTML report test needs it)" >&2
    return 0
  fi
  echo "installing Chromium (Debian's chromium package) for the HTML report test ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
}
install_chromium

cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --release --quiet
