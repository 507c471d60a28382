#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit tests, and the functional tests that start
# their own PouchDB Server (installed here from package-lock.json if missing). The HTML
# report test renders the report in headless Chromium (Debian's package, installed here
# if missing); the metrics endpoint's tests parse with PyPI's prometheus-client (installed
# here into target/test-python).
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

# The metrics endpoint's tests read its text with PyPI's prometheus-client, pinned, in a
# virtual environment of the repository's own (Debian's Python refuses pip installs
# outside one).
install_prometheus_client() {
  local venv=target/test-python version=0.26.0
  if "$venv/bin/python3" -c "import importlib.metadata as m, sys; sys.exit(m.version('prometheus-client') != '$version')" 2>/dev/null; then
    return 0
  fi
  echo "installing prometheus-client $version (PyPI) into $venv for the metrics endpoint's tests ..." >&2
  if ! python3 -m venv "$venv" 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
      python3 -m venv "$venv"
    else
      echo "python3 -m venv failed: install Python's venv module (Debian: python3-venv) for the metrics endpoint's tests" >&2
      return 0
    fi
  fi
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "prometheus-client==$version"
}
install_prometheus_client

cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
# The unit tests once more in the debug profile, whose arithmetic checks for overflow
# (the release profile's wraps silently).
cargo test --lib --quiet
cargo test --release --quiet
