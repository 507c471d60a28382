#!/usr/bin/env bash
# Reproduces sections 2 and 3 of docs/PERFORMANCE.md: sofabench's own CPU time and peak
# memory while it runs Iron Cushion's workload against a local PouchDB Server.
#
#   bash bench/run-workload.sh [workload] [memory] [leveldb]     (default: workload memory)
#
#   workload  section 2: 10 connections x 10 bulk inserts x 1,000 documents, then
#             10 x 1,000 CRUD operations (weights 2/2/3/3), REPS times, each into a fresh
#             database of one in-memory PouchDB Server
#   memory    section 3: bulk insert only (--num_crud_operations=0) of each of
#             MEMORY_SIZES documents, REPS times each, in-memory PouchDB Server
#   leveldb   section 3 again with LEVELDB_SIZES, against PouchDB Server on LevelDB
#             (files in a temporary directory), for sizes the in-memory server cannot hold
#
# Environment: SOFABENCH (the binary; default target/release/sofabench, built if missing),
# REPS (default 3), MEMORY_SIZES (default "10000 100000"), LEVELDB_SIZES (default
# "10000 100000 1000000"), OUT (directory for every run's report and /usr/bin/time -v
# output; default a new temporary directory, kept and named at the end).
#
# Needs /usr/bin/time (Debian: apt-get install -y time), python3, curl, Node.js with npm.
# Each run's figures go to stdout as one line; the tables at the end give medians and
# the spread (min-max) over the repetitions.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pouchdb-server.sh

REPS="${REPS:-3}"
MEMORY_SIZES="${MEMORY_SIZES:-10000 100000}"
LEVELDB_SIZES="${LEVELDB_SIZES:-10000 100000 1000000}"
SOFABENCH="${SOFABENCH:-target/release/sofabench}"
OUT="${OUT:-$(mktemp -d -t sofabench-perf.XXXXXX)}"
mkdir -p "$OUT"
RESULTS="$OUT/results.tsv"
SECTIONS=("$@")
[ ${#SECTIONS[@]} -gt 0 ] || SECTIONS=(workload memory)

if [ ! -x /usr/bin/time ]; then
  echo "/usr/bin/time is missing (Debian: apt-get install -y time)" >&2
  exit 2
fi
if [ ! -x "$SOFABENCH" ]; then
  cargo build --release
fi

# Like start_pouchdb_server, but PouchDB keeps its databases in LevelDB files (no -m).
start_pouchdb_server_leveldb() {
  install_pouchdb_server
  POUCHDB_DIR="$(mktemp -d -t sofabench-pouchdb.XXXXXX)"
  local port
  port="$(free_port)"
  echo '{"log":{"file":"/dev/null","level":"none"}}' > "$POUCHDB_DIR/config.json"
  "$SOFABENCH_ROOT/node_modules/.bin/pouchdb-server" -o 127.0.0.1 -p "$port" -n \
    -c "$POUCHDB_DIR/config.json" -d "$POUCHDB_DIR/" >"$POUCHDB_DIR/server.out" 2>&1 &
  POUCHDB_PID=$!
  trap stop_pouchdb_server EXIT INT TERM
  POUCHDB_URL="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    if curl -fsS "$POUCHDB_URL/" >/dev/null 2>&1; then
      echo "PouchDB Server (LevelDB in $POUCHDB_DIR) is up at $POUCHDB_URL" >&2
      return 0
    fi
    sleep 0.1
  done
  echo "PouchDB Server did not answer at $POUCHDB_URL within 10 s:" >&2
  cat "$POUCHDB_DIR/server.out" >&2
  return 1
}

# CPU seconds (user+sys, all threads) the server has used so far.
server_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$POUCHDB_PID/stat"
}

# measure SECTION LABEL DOCUMENTS FLAGS...: one sofabench run under /usr/bin/time -v;
# appends a line to $RESULTS and prints it.
measure() {
  local section="$1" label="$2" documents="$3"
  shift 3
  local cpu_before cpu_after code=0
  cpu_before="$(server_cpu)"
  /usr/bin/time -v -o "$OUT/$label.time" "$SOFABENCH" run \
    --database_address="$POUCHDB_URL" --database_name="$label" --quiet "$@" \
    >"$OUT/$label.out" 2>"$OUT/$label.err" || code=$?
  cpu_after="$(server_cpu)"
  python3 - "$section" "$label" "$documents" "$code" "$cpu_before" "$cpu_after" \
    "$OUT/$label.time" "$OUT/$label.out" "$OUT/$label.err" >>"$RESULTS" <<'PY'
import re, sys
section, label, documents, code, before, after, time_file, out_file, err_file = sys.argv[1:]
t = open(time_file).read()
out = open(out_file).read()
def field(name):
    return re.search(re.escape(name) + r": (\S+)", t).group(1)
wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
wall = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
taken = re.findall(r"timeTaken=([\d.]+) secs", out)
rate = re.search(r"remoteProcessingRate=([\d,.]+)", out)
# Rows of the latency tables: name, count, errors, ...
rows = re.findall(r"^  (bulk_insert|create|read|update|delete)\s+([\d,]+)\s+([\d,]+)", out, re.M)
ops = {name: int(count.replace(",", "")) for name, count, _ in rows}
errors = sum(int(e.replace(",", "")) for _, _, e in rows)
crud = sum(v for k, v in ops.items() if k != "bulk_insert")
print("\t".join(str(x) for x in [
    section, label, documents, code,
    field("User time (seconds)"), field("System time (seconds)"),
    field("Maximum resident set size (kbytes)"), f"{wall:.2f}",
    taken[0] if taken else "", rate.group(1).replace(",", "") if rate else "",
    taken[1] if len(taken) > 1 else "", crud, errors,
    f"{float(after) - float(before):.2f}",
]))
PY
  tail -n 1 "$RESULTS" | awk -F'\t' '{ printf "%-8s %-12s docs=%-8s exit=%s user=%ss sys=%ss maxRSS=%sKB wall=%ss bulk=%ss (%s docs/s) crud=%ss (%s ops) errors=%s serverCPU=%ss\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 }'
  if [ "$code" != 0 ]; then
    echo "  exit code $code; stderr:" && cat "$OUT/$label.err"
  fi
}

WORKLOAD=(--num_connections=10 --num_documents_per_bulk_insert=1000
  --num_bulk_insert_operations=10 --num_crud_operations=1000
  --create_weight=2 --read_weight=2 --update_weight=3 --delete_weight=3 --seed=1)

for section in "${SECTIONS[@]}"; do
  case "$section" in
    workload)
      start_pouchdb_server
      for i in $(seq 1 "$REPS"); do
        measure workload "perf$i" 100000 "${WORKLOAD[@]}"
      done
      stop_pouchdb_server
      ;;
    memory | leveldb)
      if [ "$section" = memory ]; then
        start_pouchdb_server
        sizes="$MEMORY_SIZES"
      else
        start_pouchdb_server_leveldb
        sizes="$LEVELDB_SIZES"
      fi
      for n in $sizes; do
        for i in $(seq 1 "$REPS"); do
          # --cleanup drops each database after its run (after the peak was reached),
          # so the server's memory does not grow from run to run.
          measure "$section" "${section}${n}r$i" "$n" --num_connections=10 \
            --num_documents_per_bulk_insert=1000 \
            --num_bulk_insert_operations=$((n / 10000)) --num_crud_operations=0 \
            --seed=1 --cleanup
        done
      done
      stop_pouchdb_server
      ;;
    *)
      echo "unknown section $section (workload, memory, leveldb)" >&2
      exit 2
      ;;
  esac
done

python3 - "$RESULTS" <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    (section, label, docs, code, user, sys_, rss, wall, bulk_t, bulk_rate,
     crud_t, crud, errors, server) = line.rstrip("\n").split("\t")
    runs[(section, int(docs))].append(dict(
        code=int(code), cpu=float(user) + float(sys_), user=float(user), sys=float(sys_),
        rss=int(rss), wall=float(wall), bulk_t=float(bulk_t or 0),
        bulk_rate=float(bulk_rate or 0), crud_t=float(crud_t or 0), crud=int(crud),
        errors=int(errors), server=float(server), docs=int(docs)))
def spread(values, fmt):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"
print()
print("median (min-max) over the repetitions")
for (section, docs), rs in sorted(runs.items()):
    ops = docs + rs[0]["crud"]
    print(f"{section} {docs:,} documents, {len(rs)} runs, exit codes {[r['code'] for r in rs]}, "
          f"errors {[r['errors'] for r in rs]}")
    print(f"  client CPU user+sys  {spread([r['cpu'] for r in rs], '{:.2f}')} s "
          f"(user {spread([r['user'] for r in rs], '{:.2f}')}, sys {spread([r['sys'] for r in rs], '{:.2f}')})")
    print(f"  client CPU per operation ({docs:,} documents + {rs[0]['crud']:,} CRUD) "
          f"{spread([r['cpu'] / ops * 1e6 for r in rs], '{:.1f}')} us")
    print(f"  client peak RSS      {spread([r['rss'] for r in rs], '{:,}')} KB")
    print(f"  wall                 {spread([r['wall'] for r in rs], '{:.1f}')} s")
    print(f"  server CPU           {spread([r['server'] for r in rs], '{:.1f}')} s")
    print(f"  bulk timeTaken       {spread([r['bulk_t'] for r in rs], '{:.2f}')} s, "
          f"remoteProcessingRate {spread([r['bulk_rate'] for r in rs], '{:,.0f}')} docs/s")
    if rs[0]["crud"]:
        print(f"  CRUD timeTaken       {spread([r['crud_t'] for r in rs], '{:.2f}')} s, "
              f"{spread([r['crud'] / r['crud_t'] for r in rs], '{:,.0f}')} operations/s")
for section in sorted({s for s, _ in runs if s != "workload"}):
    sizes = sorted(d for s, d in runs if s == section)
    for small, large in zip(sizes, sizes[1:]):
        a = statistics.median(r["rss"] for r in runs[(section, small)])
        b = statistics.median(r["rss"] for r in runs[(section, large)])
        print(f"{section}: ({b:,} KB - {a:,} KB) / ({large:,} - {small:,} documents) = "
              f"{(b - a) * 1024 / (large - small):.1f} bytes per live document")
PY
echo "raw outputs: $OUT" >&2
