#!/usr/bin/env bash
# Starts a throwaway PouchDB Server (the pinned npm package) on a free port in a new
# temporary directory, and prints its address. Meant to be sourced:
#   . scripts/pouchdb-server.sh && start_pouchdb_server   # sets POUCHDB_URL, POUCHDB_PID
#   stop_pouchdb_server                                    # or let the EXIT trap do it
set -euo pipefail

SOFABENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

install_pouchdb_server() {
  if [ ! -x "$SOFABENCH_ROOT/node_modules/.bin/pouchdb-server" ]; then
    echo "installing PouchDB Server from package-lock.json (npm ci) ..." >&2
    (cd "$SOFABENCH_ROOT" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

start_pouchdb_server() {
  install_pouchdb_server
  POUCHDB_DIR="$(mktemp -d -t sofabench-pouchdb.XXXXXX)"
  local port
  port="$(free_port)"
  echo '{"log":{"file":"/dev/null","level":"none"}}' > "$POUCHDB_DIR/config.json"
  "$SOFABENCH_ROOT/node_modules/.bin/pouchdb-server" -o 127.0.0.1 -p "$port" -n \
    -c "$POUCHDB_DIR/config.json" -d "$POUCHDB_DIR/" -m >"$POUCHDB_DIR/server.out" 2>&1 &
  POUCHDB_PID=$!
  trap stop_pouchdb_server EXIT INT TERM
  POUCHDB_URL="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    if curl -fsS "$POUCHDB_URL/" >/dev/null 2>&1; then
      echo "PouchDB Server $(node -p "require('$SOFABENCH_ROOT/node_modules/pouchdb-server/package.json').version") is up at $POUCHDB_URL" >&2
      return 0
    fi
    if ! kill -0 "$POUCHDB_PID" 2>/dev/null; then
      echo "PouchDB Server did not start:" >&2
      cat "$POUCHDB_DIR/server.out" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "PouchDB Server did not answer at $POUCHDB_URL within 10 s" >&2
  return 1
}

stop_pouchdb_server() {
  if [ -n "${POUCHDB_PID:-}" ]; then
    kill "$POUCHDB_PID" 2>/dev/null || true
    wait "$POUCHDB_PID" 2>/dev/null || true
    POUCHDB_PID=""
  fi
  if [ -n "${POUCHDB_DIR:-}" ]; then
    rm -rf "$POUCHDB_DIR"
    POUCHDB_DIR=""
  fi
}
