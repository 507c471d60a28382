#!/usr/bin/env python3
"""A fleet of live devices held by one sofabench process against couch-target --store:
what an idle device costs the client in memory, what a sync cycle costs it in CPU next
to a single-document read of the same size, and whether the devices keep to their
request budget. docs/PERFORMANCE.md ("Devices") explains the figures.

    python3 bench/devices.py [--devices 10000] [--duration 60] [--feeds longpoll,continuous]
                             [--write-rate 0.01] [--doc-bytes 256] [--out DIR] [--no-pin]
                             [--smoke]

Runs, each against a couch-target of its own (--store --count-every 1, pinned to core 1;
sofabench on core 0, as bench/bench.py pins them):

  base         a fleet of 1 device, no writes: the process without devices
  idle-FEED    --devices N live devices holding FEED feeds (longpoll, continuous), no
               writes: memory per idle device = (RSS - base RSS) / N, taken once every
               device holds its feed (couch-target counts the feeds it holds) and the
               client's RSS has settled; the requests the target saw besides the feed
               reads (the budget: none)
  writes-FEED  the same with --write-rate writes per device per second: client CPU per
               sync cycle (its CPU over the run / the cycles the result counts), and the
               CPU of the idle run subtracted, per cycle
  read         sofabench reading one document of --doc-bytes by id (1 connection,
               --duration seconds) against a stateless couch-target --answer-bytes: client
               CPU per read

Memory per idle device excludes the per-document replica state, which the result states
on its own (the devices' state_bytes). RSS is /proc/PID/status VmRSS, CPU utime+stime of
/proc/PID/stat, both of the sofabench process (all its threads), sampled every second.

Needs open files for every connection a device holds (its feed, and its requests'
connection while it has one) plus ~100: the script raises its soft limit to the hard one
and says when that is too low (10,000 devices: at least 20,100; `ulimit -Hn`).

sofabench and couch-target are built with cargo (honouring CARGO_TARGET_DIR); SOFABENCH=PATH
measures another sofabench binary. Writes OUT/devices.jsonl and OUT/report.md; prints the
report. Exits 1 when a run failed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench as harness  # noqa: E402  (bench/bench.py: its process and machine helpers)

ROOT = harness.ROOT
BENCH = harness.BENCH
# The settling wait: RSS is taken once it grew less than this in the last SETTLE seconds.
SETTLE = 3
SETTLED_KB = 256
# Requests the run itself sends, not its devices: the disk look (GET /db of every
# database once per --interval) and the server's statistics.
RUN_OWN = ("db_info", "server", "welcome")


def log(message):
    harness.log(message)


# ----------------------------------------------------------------------------- the fleet

def fleet_flags(devices, feed, write_rate, doc_bytes, duration):
    """sofabench's flags for a fleet of live devices (devices only: the steady-fleet
    scenario's phase, taking every device flag given)."""
    return [
        "--scenario=steady-fleet",
        f"--devices={devices}",
        # Two devices per database: what one pushes, the other pulls.
        f"--databases={max(1, devices // 2)}",
        "--device-scope=own-database",
        "--device-sync=live",
        f"--device-feed={feed}",
        f"--device-writes={write_rate:g}",
        f"--device-doc-size={doc_bytes}",
        f"--duration={duration}s",
        # The run's own looks at the server: its statistics off, and the disk look (a
        # GET /db per database per interval) every 10 s; counted apart from the devices.
        "--no-server-stats",
        "--interval=10s",
    ]


def fleet_figures(result):
    """What the result says of the fleet (its phase's `devices`): sync cycles (pushes
    that sent something and pulls), the replica state, failed pulls (each a feed read
    again), convergence."""
    phases = result.get("phases") or [{}]
    devices = phases[-1].get("devices") or {}
    counts = devices.get("counts") or {}
    convergence = devices.get("convergence") or {}
    return dict(
        cycles=counts.get("pushes", 0) + counts.get("pulls", 0),
        pushes=counts.get("pushes", 0),
        pulls=counts.get("pulls", 0),
        requests=counts.get("requests", 0),
        failed=counts.get("failed_pushes", 0) + counts.get("failed_pulls", 0),
        over_budget=counts.get("over_budget", 0),
        writes=counts.get("writes", 0),
        requests_per_cycle=(devices.get("requests_per_cycle") or {}).get("mean"),
        bytes_per_cycle=(devices.get("bytes_per_cycle") or {}).get("mean"),
        state_bytes=devices.get("state_bytes", 0),
        reconnects=counts.get("failed_pulls", 0) + counts.get("feeds_given_up", 0),
        most_feeds_open=devices.get("most_feeds_open", 0),
        converged=f"{convergence.get('converged', '?')}/{convergence.get('checked', '?')}",
    )


# ----------------------------------------------------------------------------- measuring

def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class Target:
    """couch-target --store --count-every 1; its counting lines read as they come."""

    def __init__(self, binary, cpus, out_dir, name):
        self.port = harness.free_port()
        self.lines = []
        self.log = open(out_dir / f"{name}.err", "w")
        cmd = [str(binary), "--port", str(self.port), "--store", "--count-every", "1"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     preexec_fn=harness.affinity(cpus))
        self.proc.stdout.readline()  # "couch-target listening on ..."
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                pass

    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def feeds(self):
        return self.lines[-1]["feeds"] if self.lines else 0

    def cpu(self):
        return harness.process_cpu(self.proc.pid)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def run_fleet(tools, cpus, out_dir, label, devices, feed, write_rate, doc_bytes, duration):
    """One fleet run; its samples (every second: client RSS and CPU, feeds held by the
    target), the result's figures and the target's request counts."""
    target = Target(tools.couch_target, cpus["target"], out_dir, label)
    result_path = out_dir / f"{label}.json"
    cmd = [str(tools.sofabench), "run", f"--database_address={target.url()}",
           "--database_name=fleet", "--quiet", f"--json={result_path}",
           *fleet_flags(devices, feed, write_rate, doc_bytes, duration)]
    (out_dir / f"{label}.cmd").write_text(" ".join(cmd) + "\n")
    with open(out_dir / f"{label}.out", "w") as out, open(out_dir / f"{label}.stderr", "w") as err:
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, preexec_fn=harness.affinity(cpus["client"]))
        samples = []
        while proc.poll() is None:
            samples.append(dict(t=time.monotonic() - started, rss_kb=rss_kb(proc.pid),
                                cpu=harness.process_cpu(proc.pid), feeds=target.feeds()))
            if time.monotonic() - started > duration + 600:
                proc.kill()
            time.sleep(1)
        wall = time.monotonic() - started
    target_lines = list(target.lines)
    target.stop()
    figures = {}
    try:
        figures = fleet_figures(json.loads(result_path.read_text()))
    except (OSError, ValueError) as e:
        log(f"  {label}: no result ({e}); see {out_dir / (label + '.stderr')}")
    return dict(label=label, devices=devices, feed=feed, write_rate=write_rate, exit=proc.returncode,
                wall=wall, samples=samples, target=target_lines, **figures)


def live_window(run):
    """The samples from when every device held its feed (as the target counts them) and
    the RSS settled, while they all still hold it (before the last sync)."""
    samples = [s for s in run["samples"] if s["rss_kb"]]
    held = 0.95 * run["devices"]
    start = next((i for i, s in enumerate(samples) if s["feeds"] >= run["devices"]), None)
    if start is None:
        return []
    end = start
    while end + 1 < len(samples) and samples[end + 1]["feeds"] >= held:
        end += 1
    for i in range(start + SETTLE, end):
        if samples[i]["rss_kb"] - samples[i - SETTLE]["rss_kb"] < SETTLED_KB:
            # A second short of the end: the last sync may have begun within it.
            return samples[i:end]
    return []


def budget(run, window_lines):
    """Requests per device per interval beyond the held feed reads, in the window."""
    beyond, feeds = 0, 0
    for line in window_lines:
        for kind, n in line["requests"].items():
            if kind in ("changes_longpoll", "changes_continuous"):
                feeds += n
            elif kind not in RUN_OWN:
                beyond += n
    intervals = max(1, len(window_lines))
    n = max(1, run["devices"])
    return beyond / n / intervals, feeds / n / intervals


def summarize(run):
    window = live_window(run)
    out = dict(label=run["label"], devices=run["devices"], feed=run["feed"],
               write_rate=run["write_rate"], exit=run["exit"], cycles=run.get("cycles", 0),
               state_bytes=run.get("state_bytes", 0), reconnects=run.get("reconnects", 0),
               converged=run.get("converged"), held=max((s["feeds"] for s in run["samples"]), default=0))
    if len(window) >= 2:
        first, last = window[0], window[-1]
        out["rss_kb"] = sorted(s["rss_kb"] for s in window)[len(window) // 2]
        out["cpu_rate"] = (last["cpu"] - first["cpu"]) / (last["t"] - first["t"])
        lines = [l for l in run["target"] if first["t"] <= l["t"] <= last["t"]]
        out["beyond_per_device_interval"], out["feeds_per_device_interval"] = budget(run, lines)
    out["cpu"] = run["samples"][-1]["cpu"] if run["samples"] else 0
    return out


def read_run(tools, cpus, out_dir, doc_bytes, duration):
    """Client CPU per single-document read of doc_bytes (1 connection)."""
    port = harness.free_port()
    server = harness.Server("couch-target-read", [str(tools.couch_target), "--port", str(port),
                                                  "--answer-bytes", str(doc_bytes)],
                            port, cpus["target"], out_dir)
    try:
        cmd = harness.sofabench_cmd(tools, server.url(), *harness.read_flags(1, duration))
        quiet = harness.Quiet(10.0, 0)
        r = harness.run_measured("read", cmd, out_dir, cpus["client"], server, quiet, duration + 120)
    finally:
        server.stop()
    reads = harness.parse_reads(r["stdout"])
    return dict(exit=r["exit"], reads=reads["requests"], cpu=r["cpu"],
                cpu_per_read_us=r["cpu"] / max(1, reads["requests"]) * 1e6, rss_kb=r["rss_kb"])


# ----------------------------------------------------------------------------- report

def cycle_cpu_us(run, idle, duration):
    """Client CPU per sync cycle of a writes run: the CPU rate above the idle run's (both
    over the live window) for the phase, over the cycles above the idle run's."""
    if not run["label"].startswith("writes-") or not idle or "cpu_rate" not in run or "cpu_rate" not in idle:
        return None
    extra_cycles = run["cycles"] - idle["cycles"]
    if extra_cycles <= 0:
        return None
    return (run["cpu_rate"] - idle["cpu_rate"]) * duration / extra_cycles * 1e6


def report(runs, read, context):
    base = next((r for r in runs if r["label"] == "base"), None)
    lines = [f"## Devices: {context['devices']:,} live devices against couch-target --store",
             "", f"{context['date']}; {context['machine']}; {context['pinning']}; "
             f"sofabench {context['sofabench']}", "", f"`{context['command']}`", "",
             "| run | devices held (target) | client RSS MB | RSS per idle device KB | replica state B per device "
             "| client CPU % | sync cycles | CPU per sync cycle µs | requests beyond feeds per device per s "
             "| feed reads per device per s | reconnects | exit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    idle = {r["feed"]: r for r in runs if r["label"].startswith("idle-")}
    for r in runs:
        per_device = ""
        if base and r is not base and "rss_kb" in r and "rss_kb" in base:
            per_device = f"{(r['rss_kb'] - base['rss_kb']) / max(1, r['devices'] - base['devices']):.1f}"
        per_cycle = ""
        us = cycle_cpu_us(r, idle.get(r["feed"]), context["duration"])
        if us is not None:
            per_cycle = f"{us:,.0f}"
        state = f"{r['state_bytes'] / max(1, r['devices']):,.0f}" if r["state_bytes"] else ""
        lines.append(
            f"| {r['label']} | {r['held']:,} | {r.get('rss_kb', 0) / 1024:,.1f} | {per_device} | {state} "
            f"| {r.get('cpu_rate', 0) * 100:.1f} | {r['cycles']:,} | {per_cycle} "
            f"| {r.get('beyond_per_device_interval', float('nan')):.4f} "
            f"| {r.get('feeds_per_device_interval', float('nan')):.4f} | {r['reconnects']} | {r['exit']} |")
    if read:
        lines += ["", f"Single-document read of {context['doc_bytes']} bytes by id (1 connection, "
                      f"{context['duration']} s, stateless couch-target --answer-bytes): "
                      f"{read['cpu_per_read_us']:.1f} µs client CPU per read ({read['reads']:,} reads)."]
        for r in runs:
            us = cycle_cpu_us(r, idle.get(r["feed"]), context["duration"])
            if us is not None:
                ratio = us / read["cpu_per_read_us"]
                lines.append(f"- {r['label']}: a sync cycle costs {ratio:.1f} single-document reads of client CPU")
    lines += ["", "RSS per idle device is (RSS of the run − RSS of the 1-device run) / (devices − 1), "
                  "the median RSS once every device held its feed and RSS settled; the replica's "
                  "per-document state is the result's state_bytes, not in it. CPU per sync cycle is the "
                  "client's CPU rate (user+sys) above the idle run's, both while every device held its "
                  "feed, over the phase, divided by the push and pull cycles above the idle run's "
                  "(the idle run's cycles are the warm sync, feed timeouts and the last sync). Requests beyond feeds counts every "
                  "request couch-target saw while the devices were live that was not a held feed read, "
                  "less the run's own GET /db disk looks (the budget: 0 without writes)."]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--devices", type=int, default=10000)
    p.add_argument("--duration", type=int, default=60, help="seconds of each fleet run")
    p.add_argument("--feeds", default="longpoll,continuous")
    p.add_argument("--write-rate", type=float, default=0.01,
                   help="writes per device per second of the writes runs")
    p.add_argument("--doc-bytes", type=int, default=256)
    p.add_argument("--out")
    p.add_argument("--no-pin", action="store_true")
    p.add_argument("--smoke", action="store_true", help="100 devices for 10 s: a check that it works")
    args = p.parse_args()
    if args.smoke:
        args.devices, args.duration = 100, 10
    feeds = [f for f in args.feeds.split(",") if f]
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="sofabench-devices."))
    out.mkdir(parents=True, exist_ok=True)
    fds = harness.raise_fd_limit()
    needed = 2 * args.devices + 100
    if fds < needed:
        log(f"open files limited to {fds}: {args.devices:,} devices may need {needed:,} "
            f"(a feed and a request connection each); raise ulimit -Hn")
    tools = harness.Tools(args)
    tools.build()
    pin = not args.no_pin and (os.cpu_count() or 1) >= 2
    cpus = dict(target={1} if pin else None, client={0} if pin else None)
    context = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine=harness.machine_text(),
                   pinning="target on core 1, client on core 0" if pin else "nothing pinned",
                   sofabench=tools.versions().get("sofabench", "?"), devices=args.devices,
                   duration=args.duration, doc_bytes=args.doc_bytes,
                   command="python3 bench/devices.py " + " ".join(sys.argv[1:]))
    log(f"results in {out}; {context['pinning']}; open files limit {fds}")
    plan = [("base", 1, feeds[0], 0)]
    plan += [(f"idle-{f}", args.devices, f, 0) for f in feeds]
    plan += [(f"writes-{f}", args.devices, f, args.write_rate) for f in feeds]
    runs, failures = [], []
    with open(out / "devices.jsonl", "w") as jsonl:
        for label, n, feed, rate in plan:
            log(f"{label}: {n:,} devices, {feed} feeds, {rate} writes/s each, {args.duration} s")
            run = run_fleet(tools, cpus, out, label, n, feed, rate, args.doc_bytes, args.duration)
            jsonl.write(json.dumps(run) + "\n")
            summary = summarize(run)
            runs.append(summary)
            if run["exit"] != 0 or "rss_kb" not in summary:
                failures.append(label)
                log(f"  {label} failed: exit {run['exit']}, held at most {summary['held']:,} feeds; "
                    f"see {out / (label + '.stderr')}")
    log(f"read: one document of {args.doc_bytes} bytes by id, {args.duration} s")
    read = read_run(tools, cpus, out, args.doc_bytes, args.duration)
    if read["exit"] != 0:
        failures.append("read")
    text = report(runs, read, context)
    (out / "report.md").write_text(text + "\n")
    print(text)
    if failures:
        log(f"failed: {', '.join(failures)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
