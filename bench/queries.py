#!/usr/bin/env python3
"""The client's CPU per query against its CPU per read of an answer of the same size
(issue 16's goal: a query costs at most twice a read). `make bench-queries` runs it.

    python3 bench/queries.py [--sizes 1024,16384,262144] [--rows 25] [--duration 10]
                             [--connections 8] [--reps 3] [--out DIR] [--no-pin]

Against couch-target --answer-bytes S --rows R (bench/couch-target), which answers a read
by id with an S-byte document and a `_find`, a view query or an `_all_docs` query with R
rows of S bytes in all, sofabench runs, for each size, a closed loop of only reads, then
of only `find`, `view` and `all_docs` queries (a scenario file each: a load of one bulk
request of 100 documents per connection, then --duration seconds of the operation), the
kinds and repetitions interleaved. Client CPU is user+sys of the sofabench process from
wait4's rusage, divided by the operations its result file counts (the load's 8 bulk
requests included in both, a few milliseconds of CPU). The client runs on core 0 and
couch-target on core 1 (--no-pin: both unpinned).

Writes OUT/results.jsonl and OUT/report.md, and prints the report. Exits 1 when a run
failed or an operation of one failed.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import bench

QUERIES = {
    "find": """
[query.q]
kind = "find"
field = "integer1"
index = { fields = ["integer1"] }
""",
    "view": """
[query.q]
kind = "view"
field = "integer1"
map = "function (doc) { emit(doc.integer1, null); }"
""",
    "all_docs": """
[query.q]
kind = "all_docs"
limit = 25
""",
}


def scenario(operation, connections, duration):
    """A load of one bulk request per connection, then `operation` alone."""
    text = f"""
[[phase]]
name = "load"
mix = {{ bulk_insert = 1 }}
batch_size = 100
operations = 1
connections = {connections}
[[phase]]
name = "measured"
mix = {{ {operation} = 1 }}
duration = "{duration}s"
connections = {connections}
"""
    if operation in QUERIES:
        text += f'queries = {{ {operation} = "q" }}\n' + QUERIES[operation]
    return text


def counted(result_path):
    """Operations and failures of the run's measured phase, from its result file."""
    result = json.loads(Path(result_path).read_text())
    phase = result["phases"][-1]
    ops = sum(o["succeeded"] for o in phase["operations"])
    failed = sum(o["failed"] for o in phase["operations"])
    load = sum(o["succeeded"] for o in result["phases"][0]["operations"])
    return ops, failed, load


def run_one(tools, server, out, operation, size, args, quiet, rep):
    label = f"{operation}-{size}-r{rep}"
    scenario_path = out / f"{label}.toml"
    scenario_path.write_text(scenario(operation, args.connections, args.duration))
    result_path = out / f"{label}.json"
    cmd = bench.sofabench_cmd(tools, server.url(), "--recreate", "--seed=1",
                              "--json_document_schema_filename=examples/ironcushion.json",
                              f"--scenario={scenario_path}", f"--json={result_path}")
    cpus = {0} if args.pin else None
    record = bench.run_measured(label, cmd, out, cpus, server, quiet, args.duration * 4 + 60)
    record.update(operation=operation, size=size)
    if record["exit"] != 0:
        record.update(ops=0, failed=None)
        return record
    ops, failed, load = counted(result_path)
    record.update(ops=ops, failed=failed, load_ops=load,
                  cpu_us_per_op=record["cpu"] / ops * 1e6 if ops else None)
    return record


def report(records, args, versions):
    lines = [
        "# Client CPU per query against per read of the same answer size",
        "",
        f"{bench.machine_text()}; sofabench {versions.get('commit', '?')}; "
        f"{args.connections} connections, {args.duration} s per run, {args.rows} rows per "
        f"query answer, median of {args.reps} (min-max)",
        "",
        "| answer bytes | read µs CPU/op | find | view | all_docs | worst query / read | read ops/s | find ops/s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    worst_ratio = 0.0
    for size in args.sizes:
        def cell(operation):
            values = [r["cpu_us_per_op"] for r in records
                      if r["operation"] == operation and r["size"] == size and r.get("cpu_us_per_op")]
            return (statistics.median(values) if values else None), values

        def rate(operation):
            values = [r["ops"] / args.duration for r in records
                      if r["operation"] == operation and r["size"] == size and r.get("ops")]
            return f"{statistics.median(values):,.0f}" if values else "-"

        read, read_values = cell("read")
        cells, ratios = [], []
        for operation in QUERIES:
            median, values = cell(operation)
            cells.append(f"{median:.1f} ({min(values):.1f}-{max(values):.1f})" if median else "-")
            if median and read:
                ratios.append(median / read)
        ratio = max(ratios) if ratios else None
        worst_ratio = max(worst_ratio, ratio or 0.0)
        read_text = f"{read:.1f} ({min(read_values):.1f}-{max(read_values):.1f})" if read else "-"
        ratio_text = f"{ratio:.2f}" if ratio else "-"
        lines.append(f"| {size:,} | {read_text} | {' | '.join(cells)} | {ratio_text} | "
                     f"{rate('read')} | {rate('find')} |")
    lines += ["", f"Goal: every query at most 2 × a read's CPU. Worst ratio: {worst_ratio:.2f} "
              f"({'met' if worst_ratio <= 2.0 else 'NOT met'})."]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1024,16384,262144")
    p.add_argument("--rows", type=int, default=25)
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out", type=Path)
    p.add_argument("--no-pin", dest="pin", action="store_false")
    args = p.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    out = args.out or Path(tempfile.mkdtemp(prefix="sofabench-queries-"))
    out.mkdir(parents=True, exist_ok=True)
    tools = bench.Tools(argparse.Namespace())
    tools.build()
    versions = tools.versions()
    quiet = bench.Quiet(0.3, 60)
    records = []
    for size in args.sizes:
        port = bench.free_port()
        cmd = [str(tools.couch_target), "--port", str(port), "--answer-bytes", str(size),
               "--rows", str(args.rows)]
        server = bench.Server(f"couch-target-{size}", cmd, port, {1} if args.pin else None, out)
        try:
            for rep in range(args.reps):
                operations = ["read", *QUERIES]
                # Interleaved, their order rotated each repetition.
                operations = operations[rep % 4:] + operations[:rep % 4]
                for operation in operations:
                    bench.log(f"size {size}, {operation}, repetition {rep + 1}")
                    records.append(run_one(tools, server, out, operation, size, args, quiet, rep))
        finally:
            server.stop()
    with open(out / "results.jsonl", "w") as f:
        for record in records:
            f.write(json.dumps({k: v for k, v in record.items() if k not in ("stdout", "stderr")}) + "\n")
    text = report(records, args, versions)
    (out / "report.md").write_text(text)
    print(text)
    print(f"(results in {out})")
    bad = [r["label"] for r in records if r["exit"] != 0 or r.get("failed")]
    if bad:
        print(f"failed runs: {bad}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
