#!/usr/bin/env bash
# The test suite (`make test`): formatting, lints, unit tests, and the functional tests
# that start their own PouchDB Server (installed here from package-lock.json if missing).
# The HTML report's tests render the page in headless Chromium (Debian's package,
# installed here if missing, which takes root); the metrics endpoint's tests parse with
# PyPI's prometheus-client (installed here into target/test-python).
#
# `scripts/test.sh --quick` (`make test-quick`) leaves out what needs Chromium or Python:
# the tests whose names end in `_in_chromium` and tests/metrics_endpoint.rs. It needs
# neither root nor Python's venv.
#
# Every step runs even when one before it failed, and every test binary runs
# (--no-fail-fast); the script lists what failed and exits 1 if anything did.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pouchdb-server.sh

quick=false
if [ "${1:-}" = --quick ]; then
  quick=true
fi

# What it takes from a fresh clone on a quiet 2-core machine: make test took 767 s in CI
# with a debug and a release build, and left 3.9 GB in target/; built once (the `checked`
# profile), 782 s and 1.7 GB. make test-quick leaves out 7 tests (4 need Chromium, 3 Python).
if $quick; then
  echo "make test-quick: formatting, lints, unit and PouchDB Server tests (no Chromium, no Python); the first time about 11 minutes on 2 cores; installs PouchDB Server (npm ci, 44 MB in node_modules/) if missing" >&2
else
  echo "make test: formatting, lints, unit tests and every functional test, built once with overflow checks; the first time about 13 minutes on 2 cores and 1.7 GB in target/. Installs what is missing: PouchDB Server (npm ci, 44 MB in node_modules/), Debian's chromium, zsh, fish and groff (apt-get, needs root, 290 MB and more with their libraries), PyPI's prometheus-client 0.26.0 (a 26 MB venv in target/test-python). make test-quick needs only the first." >&2
fi

install_pouchdb_server

# Debian packages some tests drive: Chromium renders the HTML page; zsh and fish try the
# completion scripts; groff renders the man pages. A test whose program is missing says
# it skipped that check.
install_debian_tools() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v zsh >/dev/null || missing+=(zsh)
  command -v fish >/dev/null || missing+=(fish)
  command -v groff >/dev/null || missing+=(groff-base)
  if [ ${#missing[@]} = 0 ]; then
    return 0
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "missing: ${missing[*]} (Debian packages; the HTML page's tests need chromium, the completion and man page tests zsh, fish and groff): install them, or run make test-quick, which needs none" >&2
    return 0
  fi
  echo "installing ${missing[*]} (Debian's packages, apt-get) for the HTML page's, completions' and man pages' tests ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

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
      echo "installing Python's venv module (Debian's python3-venv, apt-get) ..." >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
      python3 -m venv "$venv"
    else
      echo "python3 -m venv failed: install Python's venv module (Debian: python3-venv) for the metrics endpoint's tests, or run make test-quick, which leaves them out" >&2
      return 0
    fi
  fi
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "prometheus-client==$version"
}

if ! $quick; then
  install_debian_tools
  install_prometheus_client
fi

failed=()
step() {
  echo "== $*" >&2
  if ! "$@"; then
    failed+=("$*")
  fi
}

step cargo fmt --check
step cargo clippy --all-targets --quiet -- -D warnings
if $quick; then
  # Every test target but the metrics endpoint's, then the documentation's examples.
  targets=(--lib --bins)
  for file in tests/*.rs; do
    name="$(basename "$file" .rs)"
    if [ "$name" != metrics_endpoint ]; then
      targets+=(--test "$name")
    fi
  done
  step cargo test --profile checked --no-fail-fast "${targets[@]}" -- --quiet --skip _in_chromium
  step cargo test --profile checked --doc --quiet
else
  # The profile `checked` (Cargo.toml): release speed, arithmetic checked for overflow.
  step cargo test --profile checked --no-fail-fast -- --quiet
fi

if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAILED:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "all passed" >&2
