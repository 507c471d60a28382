#!/usr/bin/env bash
# A local PouchDB Server to point your own runs at (`make server`): the pinned npm package
# (package-lock.json, installed into node_modules/ if missing), on disk, with an admin, on
# 127.0.0.1:5984 when that port is free, else on a free port; it prints the address to
# give sofabench and stays in the foreground until Ctrl-C, which stops it. Its databases
# stay in the folder it names for the next start; delete that folder to start afresh.
#   make server                                   # data in target/pouchdb-server
#   make server SERVER_DIR=/tmp/pouch PASSWORD=s3cret
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pouchdb-server.sh

dir="${SERVER_DIR:-target/pouchdb-server}"
password="${PASSWORD:-password}"

port_is_free() {
  python3 -c 'import socket, sys; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}

install_pouchdb_server
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
port=5984
if ! port_is_free "$port"; then
  port="$(free_port)"
  echo "port 5984 is taken; using $port" >&2
fi
# PouchDB Server hashes the admin's password into this file when it starts.
# Written by Python's json, so that a password with quotes or backslashes stays one.
python3 -c 'import json, sys; print(json.dumps({"admins": {"admin": sys.argv[1]}, "log": {"file": sys.argv[2], "level": "warning"}}))' \
  "$password" "$dir/pouchdb-server.log" > "$dir/config.json"
version="$(node -p "require('./node_modules/pouchdb-server/package.json').version")"
echo "starting PouchDB Server $version on disk in $dir ..." >&2
# In a session of its own, so that Ctrl-C reaches this script, which stops the server,
# rather than the server itself, which would race the script to its end.
(cd "$dir" && exec setsid "$SOFABENCH_ROOT/node_modules/.bin/pouchdb-server" -o 127.0.0.1 -p "$port" -n \
  -c "$dir/config.json" -d "$dir/") >"$dir/server.out" 2>&1 &
pid=$!

stop() {
  trap - INT TERM
  echo >&2
  echo "stopping PouchDB Server ..." >&2
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "stopped; its databases stay in $dir (delete the folder to start afresh)" >&2
  exit 0
}
trap stop INT TERM

url="http://127.0.0.1:$port"
for _ in $(seq 1 200); do
  if curl -fsS "$url/" >/dev/null 2>&1; then
    break
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "PouchDB Server did not start:" >&2
    cat "$dir/server.out" >&2
    exit 1
  fi
  sleep 0.1
done
if ! curl -fsS "$url/" >/dev/null 2>&1; then
  echo "PouchDB Server did not answer at $url within 20 s; its output is in $dir/server.out" >&2
  kill "$pid" 2>/dev/null || true
  exit 1
fi

# Percent-encoded, so that a password with @, : or / stays in its place in the address.
encoded="$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$password")"
address="http://admin:$encoded@127.0.0.1:$port"
cat <<EOF

PouchDB Server $version is up, with the admin "admin", its data in $dir.
Give sofabench this address:

  $address

For example, in another terminal:

  sofabench run --database_address=$address --database_name=first \\
    --num_connections=10 --num_bulk_insert_operations=2 --num_documents_per_bulk_insert=500 \\
    --num_crud_operations=100

(sofabench is on the PATH after \`cargo install --path .\`; else it is target/release/sofabench
after \`cargo build --release\`.)

Ctrl-C stops the server.
EOF
status=0
wait "$pid" || status=$?
echo "PouchDB Server ended by itself (exit status $status); the end of its output ($dir/server.out):" >&2
tail -n 20 "$dir/server.out" >&2
exit 1
