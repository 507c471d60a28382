#!/usr/bin/env bash
# The first run: build sofabench, start a local PouchDB Server, run Iron Cushion's
# benchmark against it (scaled to a laptop), and stop the server however the run ends.
# Extra arguments go to `sofabench run`, e.g. scripts/demo.sh --num_connections=20
set -euo pipefail
cd "$(dirname "$0")/.."
# Measured on a 2-core machine: a cold release build takes about 290 s of CPU (20 minutes
# with other builds beside it) and leaves 613 MB in target/; the run took 36 s with other work beside it.
echo "make demo: builds sofabench (the first time about 4 minutes on 2 cores, 600 MB in target/), installs PouchDB Server into node_modules/ if missing (npm, 44 MB), runs Iron Cushion's workload scaled to a laptop against it (about 35 s), and stops it" >&2
cargo build --release
. scripts/pouchdb-server.sh
start_pouchdb_server
"${CARGO_TARGET_DIR:-target}/release/sofabench" run --database_address="$POUCHDB_URL" --database_name=demo \
  --json_document_schema_filename=examples/ironcushion.json \
  --num_connections=10 --num_documents_per_bulk_insert=1000 --num_bulk_insert_operations=10 \
  --num_crud_operations=1000 --create_weight=2 --read_weight=2 --update_weight=3 --delete_weight=3 \
  "$@"
