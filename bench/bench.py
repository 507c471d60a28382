#!/usr/bin/env python3
"""sofabench's performance harness: sofabench against the peers wrk and oha, on one machine,
in one run, the tools interleaved. `make bench` runs it; `make bench-smoke` checks in
seconds that it still works. docs/PERFORMANCE.md ("Harness") explains the figures.

    python3 bench/bench.py [--smoke] [--sections reads,workload,generate,connections,memory,pacing,tls]
                           [--reps N] [--duration S] [--out DIR] [--no-pin] [--quiet-wait S]

Sections (each repeated --reps times, tools interleaved and their order rotated per
repetition; medians with min-max):

  reads        GET of a 250-byte document by id, 1/8/64 connections, --duration seconds:
               sofabench, wrk and oha against couch-target; wrk and oha against nginx too
  workload     Iron Cushion's workload (10 x 10 x 1,000 bulk, 10 x 1,000 CRUD, 2/2/3/3)
               against couch-target, and the same bulk step alone
  generate     cargo bench --bench generate (documents generated per second, one core)
  connections  1,000 and 10,000 connections held at --rate 1,000/s for 30 s (couch-target)
  memory       bulk insert only of 10^5 and 10^6 documents: peak memory, bytes per document
  pacing       the open model's send lag: --rate 1,000 and 10,000/s of reads against
               couch-target --delay-ms 2, with each way of waiting for a slot (the timer
               thread, the default; a timerfd per connection; tokio's timer: SOFABENCH_ALARM=
               thread|timerfd|tokio): send lag, response p50 minus service p50, client CPU
  tls          over https: nginx (bench/nginx-tls.conf; TLS 1.3, TLS_AES_128_GCM_SHA256,
               X25519 only; a self-signed certificate made with openssl for the run)
               answering reads of a document itself (bench/document.json) and passing the
               rest (setup, bulk inserts) on to couch-target. Reads by id at 8 and 64
               connections, --duration seconds: sofabench, wrk and oha; sofabench and wrk
               also over plain http through the same nginx, for what TLS adds. The
               workload's bulk step alone over https and http (bench/bulk-template.json:
               about 250 bytes per document as sent). Before the runs each client is run
               once against a port where nginx logs what was negotiated: anything but that
               one suite is a failed run.

sofabench and couch-target are built with cargo (honouring CARGO_TARGET_DIR); SOFABENCH=PATH
measures another sofabench binary instead. The reads and tls sections need nginx
(apt-get install -y nginx-light), tls also the openssl command; wrk and oha are skipped
with a note when missing.

Client CPU is user+sys from the kernel's accounting of the client process (wait4's
rusage), peak memory its maximum RSS as GNU time (/usr/bin/time, which launches every
client) reports it. With two or more cores the
target runs pinned to core 1 and every client to core 0 (--no-pin: both unpinned).

Before each run the harness waits (up to --quiet-wait seconds) until the machine is quiet:
less than --quiet-max cores busy over one second with only idle targets running. During
each run it records the CPU that neither the client nor the target used ("other"); a run
where that exceeded --quiet-max is repeated (up to --retries times), so a build that
started meanwhile does not end up in the medians. The report states the load seen.

Writes OUT/results.jsonl (one line per run), OUT/report.md (the tables) and each run's
output in OUT/runs/; prints the report. Exits 1 when a run failed (non-zero exit, output
that could not be read, or errors in a run that must have none).
"""

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PEER_PATH = "/bench/sb00000000-0000000001"
# sofabench with --busy-poll, as the tables name it.
BUSY = "sofabench --busy-poll"
# Iron Cushion's document with a second string: about 218 bytes generated, 248 as sent
# with its _id, the "about 250 bytes" of the tls section's bulk insert.
BULK_TEMPLATE = BENCH / "bulk-template.json"
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

FULL = dict(
    reps=3,
    duration=10,
    read_connections=[1, 8, 64],
    tls_connections=[8, 64],
    scale_connections=[1000, 10000],
    scale_duration=30,
    scale_rate=1000,
    memory_sizes=[100_000, 1_000_000],
    generate_documents=None,  # the bench's default, 5,000,000 per case
    workload=dict(connections=10, bulk_ops=10, bulk_size=1000, crud_ops=1000),
    pacing_rates=[1000, 10000],
    pacing_duration=20,
    quiet_wait=600,
    retries=2,
)
SMOKE = dict(
    reps=1,
    duration=1,
    read_connections=[1, 8],
    tls_connections=[8],
    scale_connections=[100],
    scale_duration=2,
    scale_rate=200,
    memory_sizes=[10_000, 20_000],
    generate_documents=100_000,
    workload=dict(connections=4, bulk_ops=2, bulk_size=500, crud_ops=200),
    pacing_rates=[200],
    pacing_duration=2,
    quiet_wait=0,
    retries=0,
)
SECTIONS = ["reads", "workload", "generate", "connections", "memory", "pacing", "tls"]
# How sofabench waits for an operation's slot under --rate: SOFABENCH_ALARM's values.
ALARMS = ["thread", "timerfd", "tokio"]


def log(message):
    print(message, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- machine


def cpu_jiffies():
    """(busy, total) jiffies of the whole machine."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    total = sum(fields[:8])
    return total - idle, total


def busy_cores(seconds=1.0):
    b0, _ = cpu_jiffies()
    time.sleep(seconds)
    b1, _ = cpu_jiffies()
    return (b1 - b0) / CLK_TCK / seconds


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def busiest_processes(n=3):
    """The processes that used most CPU in the last second, for the log."""
    def sample():
        out = {}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        text = f.read()
                    name = text[text.index("(") + 1 : text.rindex(")")]
                    rest = text[text.rindex(")") + 2 :].split()
                    out[pid] = (name, int(rest[11]) + int(rest[12]))
                except (OSError, ValueError, IndexError):
                    pass
        return out

    a = sample()
    time.sleep(1)
    b = sample()
    used = sorted(
        ((b[p][1] - a[p][1], b[p][0]) for p in b if p in a and b[p][1] > a[p][1]), reverse=True
    )
    return ", ".join(f"{name} {j / CLK_TCK:.2f}" for j, name in used[:n]) or "nothing"


class Quiet:
    """Waits for a quiet machine before each run and remembers what it saw."""

    def __init__(self, max_cores, wait):
        self.max_cores = max_cores
        self.wait = wait

    def before_run(self):
        deadline = time.monotonic() + self.wait
        waited = 0.0
        while True:
            busy = busy_cores(1.0)
            if busy <= self.max_cores or time.monotonic() >= deadline:
                quiet = busy <= self.max_cores
                if not quiet:
                    log(f"  machine still busy ({busy:.2f} cores: {busiest_processes()}); measuring anyway")
                return dict(busy_before=round(busy, 3), load_before=loadavg(), waited=round(waited),
                            quiet=quiet)
            if waited == 0:
                log(f"  waiting for a quiet machine: {busy:.2f} cores busy (load {loadavg()}; "
                    f"{busiest_processes()})")
            time.sleep(5)
            waited += 6


# ----------------------------------------------------------------------------- processes


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def process_cpu(pid):
    """user+sys seconds of a process (all its threads) so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / CLK_TCK
    except (OSError, IndexError):
        return 0.0


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def affinity(cpus):
    if not cpus:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


class Server:
    """A target process (couch-target or nginx) started for the whole section."""

    def __init__(self, name, cmd, port, cpus, out_dir, env=None):
        self.name = name
        self.port = port
        self.log = open(out_dir / f"{name}.log", "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     preexec_fn=affinity(cpus), env=env)
        if not wait_port(port):
            self.stop()
            raise RuntimeError(f"{name} did not listen on port {port}; see {self.log.name}")

    def pids(self):
        return [self.proc.pid] + children(self.proc.pid)

    def cpu(self):
        return sum(process_cpu(p) for p in self.pids())

    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def start_couch_target(binary, cpus, out_dir, delay_ms=0):
    port = free_port()
    name = "couch-target" if not delay_ms else f"couch-target-{delay_ms}ms"
    cmd = [str(binary), "--port", str(port), "--delay-ms", str(delay_ms)]
    return Server(name, cmd, port, cpus, out_dir)


def start_nginx_with(nginx, name, template, cpus, out_dir, **values):
    """Starts nginx with bench/TEMPLATE, its @KEY@s filled in from `values` (PORT is the
    port it is waited on) and @PREFIX@ a directory of its own in OUT."""
    prefix = out_dir / name
    prefix.mkdir(exist_ok=True)
    os.chmod(prefix, 0o755)
    conf = (BENCH / template).read_text().replace("@PREFIX@", str(prefix))
    for key, value in values.items():
        conf = conf.replace(f"@{key}@", str(value))
    (prefix / "nginx.conf").write_text(conf)
    cmd = [nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", str(prefix / "error.log")]
    return Server(name, cmd, values["PORT"], cpus, out_dir)


def start_nginx(nginx, cpus, out_dir):
    return start_nginx_with(nginx, "nginx", "nginx.conf", cpus, out_dir, PORT=free_port(), ROOT=BENCH)


# What every client must negotiate with the TLS target (bench/nginx-tls.conf), as nginx
# names it: $ssl_protocol $ssl_cipher $ssl_curve.
TLS_NEGOTIATED = "TLSv1.3 TLS_AES_128_GCM_SHA256 X25519"


class TlsTarget:
    """nginx terminating TLS (bench/nginx-tls.conf) in front of couch-target: the target
    of the tls section. Its CPU is both processes' (both run on the target's core). It
    listens on three ports: https (measured), http (the same server without TLS, for what
    TLS adds) and https again for the check of what each client negotiated."""

    def __init__(self, nginx, openssl, couch, cpus, out_dir):
        self.couch = couch
        self.cert, self.key = make_certificate(openssl, out_dir / "tls")
        self.https_port, self.http_port, self.check_port = free_port(), free_port(), free_port()
        self.nginx = start_nginx_with(nginx, "nginx-tls", "nginx-tls.conf", cpus, out_dir,
                                      PORT=self.https_port, PLAIN_PORT=self.http_port,
                                      CHECK_PORT=self.check_port, UPSTREAM=couch.port,
                                      CERT=self.cert, KEY=self.key, DOCUMENT=read_answer())
        self.log = out_dir / "nginx-tls" / "negotiated.log"

    def cpu(self):
        return self.nginx.cpu() + self.couch.cpu()

    def url(self, scheme="https"):
        port = self.https_port if scheme == "https" else self.http_port
        return f"{scheme}://127.0.0.1:{port}"

    def check_url(self):
        return f"https://127.0.0.1:{self.check_port}"

    def stop(self):
        self.nginx.stop()


def read_answer():
    """bench/document.json as nginx-tls.conf answers reads with it: inside a single-quoted
    nginx string, where a quote, a backslash or a $ (a variable) would change it."""
    document = (BENCH / "document.json").read_text().strip()
    if any(c in document for c in "'\\$"):
        raise RuntimeError("bench/document.json holds ', \\ or $, which nginx-tls.conf cannot "
                           "answer with as it is; remove them")
    return document


def make_certificate(openssl, directory):
    """A self-signed ECDSA P-256 certificate for 127.0.0.1, made for this run; (cert, key).
    Not a CA certificate: it is the server's own, trusted directly with --cacert."""
    directory.mkdir(exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-addext", "basicConstraints=critical,CA:FALSE"],
                   check=True, capture_output=True)
    return cert, key


def run_measured(label, cmd, out_dir, cpus, server, quiet, timeout, env=None):
    """Runs one client to its end; returns its rusage, the target's CPU and the CPU the
    rest of the machine used meanwhile."""
    state = quiet.before_run()
    runs = out_dir / "runs"
    runs.mkdir(exist_ok=True)
    out_path, err_path = runs / f"{label}.out", runs / f"{label}.err"
    (runs / f"{label}.cmd").write_text(" ".join(cmd) + "\n")
    server_before = server.cpu() if server else 0.0
    busy_before, _ = cpu_jiffies()
    started = time.monotonic()
    time_path = runs / f"{label}.time"
    # The peak RSS the kernel reports for a child includes the RSS of the process that
    # forked it (Linux folds the pre-exec memory into it): forked from this Python (about
    # 15 MB) every client would look 15 MB large. GNU time forks from a 2 MB process, so
    # its %M is the figure; CPU comes from wait4 (microseconds, time's own CPU is ~0).
    launcher = [GNU_TIME, "-f", "%M %x", "-o", str(time_path)] if GNU_TIME else []
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(launcher + cmd, stdout=out, stderr=err, preexec_fn=affinity(cpus),
                                env=env)
        timer = threading.Timer(timeout, lambda: proc.kill())
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    busy_after, _ = cpu_jiffies()
    server_cpu = (server.cpu() - server_before) if server else 0.0
    client_cpu = usage.ru_utime + usage.ru_stime
    other = (busy_after - busy_before) / CLK_TCK - client_cpu - server_cpu
    rss_kb = usage.ru_maxrss
    if GNU_TIME:
        try:
            rss_kb = int(time_path.read_text().split()[-2])
        except (OSError, ValueError, IndexError):
            pass
    return dict(
        label=label,
        cmd=" ".join(cmd),
        exit=proc.returncode,
        user=usage.ru_utime,
        sys=usage.ru_stime,
        cpu=client_cpu,
        rss_kb=rss_kb,
        wall=wall,
        server_cpu=server_cpu,
        other_cores=max(0.0, other / wall),
        voluntary_switches=usage.ru_nvcsw,
        **state,
        stdout=out_path.read_text(errors="replace"),
        stderr=err_path.read_text(errors="replace"),
    )


# ----------------------------------------------------------------------------- tools


class Tools:
    def __init__(self, args):
        self.notes = []
        # Where cargo puts the binaries: CARGO_TARGET_DIR (made absolute, so that the two
        # builds, run from different folders, agree) or each crate's own target/.
        target_dir = os.environ.get("CARGO_TARGET_DIR")
        if target_dir:
            os.environ["CARGO_TARGET_DIR"] = str(Path(target_dir).resolve())
        built = Path(os.environ["CARGO_TARGET_DIR"]) if target_dir else None
        self.sofabench = Path(os.environ.get(
            "SOFABENCH", (built or ROOT / "target") / "release/sofabench"))
        self.couch_target = (built or BENCH / "couch-target/target") / "release/couch-target"
        self.openssl = shutil.which("openssl")
        self.wrk = shutil.which("wrk")
        self.oha = shutil.which("oha") or (
            str(Path.home() / ".cargo/bin/oha") if (Path.home() / ".cargo/bin/oha").exists() else None
        )
        self.nginx = shutil.which("nginx") or (
            "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None
        )
        if not self.wrk:
            self.notes.append("wrk is not installed (apt-get install -y wrk): its runs are skipped")
        if not self.oha:
            self.notes.append("oha is not installed (cargo install oha --locked): its runs are skipped")
        if not self.nginx:
            self.notes.append("nginx is not installed (apt-get install -y nginx-light): "
                              "reads against nginx and the tls section are skipped")
        if not self.openssl:
            self.notes.append("openssl is not installed (apt-get install -y openssl): the tls "
                              "section, which makes its certificate with it, is skipped")
        if not GNU_TIME:
            self.notes.append("GNU time is not installed (apt-get install -y time): peak RSS figures "
                              "include the harness's own ~15 MB")
        self.oha_json = None
        if self.oha:
            help_text = subprocess.run([self.oha, "--help"], capture_output=True, text=True).stdout
            self.oha_json = ["--output-format", "json"] if "--output-format" in help_text else ["-j"]

    def build(self):
        if "SOFABENCH" not in os.environ:
            log("building sofabench (cargo build --release)")
            subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        log("building couch-target (bench/couch-target)")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=BENCH / "couch-target",
                       check=True)

    def versions(self):
        def first_line(cmd):
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
                return (r.stdout + r.stderr).strip().splitlines()[0]
            except (OSError, IndexError, subprocess.TimeoutExpired):
                return "?"

        v = {"sofabench": first_line([str(self.sofabench), "--version"])}
        try:
            commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                    capture_output=True, text=True).stdout.strip()
            dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "src"],
                                   capture_output=True, text=True).stdout.strip()
            v["commit"] = commit + (" (src/ modified)" if dirty else "")
        except OSError:
            v["commit"] = "?"
        if self.wrk:
            v["wrk"] = first_line([self.wrk, "-v"])
        if self.oha:
            v["oha"] = first_line([self.oha, "--version"])
        if self.nginx:
            v["nginx"] = first_line([self.nginx, "-v"])
        v["rustc"] = first_line(["rustc", "--version"])
        return v


def sofabench_cmd(tools, url, *flags):
    return [str(tools.sofabench), "run", f"--database_address={url}", "--database_name=bench",
            "--quiet", *flags]


def read_flags(connections, duration):
    return [f"--num_connections={connections}", "--num_bulk_insert_operations=1",
            "--num_documents_per_bulk_insert=100", "--read_weight=1", "--create_weight=0",
            "--update_weight=0", "--delete_weight=0", f"--duration={duration}s", "--recreate"]


def parse_sofabench(text):
    """Counts, errors and times of a sofabench report (text)."""
    result = {"phases": {}}
    for name, body in re.findall(r"^(BULK INSERT|CRUD) BENCHMARK RESULTS:\n(.*?)(?=^\S|\Z)", text,
                                 re.M | re.S):
        phase = {"time": float(re.search(r"timeTaken=([\d.]+) secs", body).group(1)), "ops": {}}
        for op, count, errors in re.findall(
                r"^  (bulk_insert|create|read|update|delete)\s+([\d,]+)\s+([\d,]+)\s+[\d.]", body, re.M):
            phase["ops"][op] = (int(count.replace(",", "")), int(errors.replace(",", "")))
        result["phases"][name] = phase
    if not result["phases"]:
        raise ValueError("no BENCHMARK RESULTS in the report")
    result["errors"] = sum(e for p in result["phases"].values() for _, e in p["ops"].values())
    return result


def parse_reads(text):
    """The reads of a sofabench run whose CRUD step only reads."""
    r = parse_sofabench(text)
    crud = r["phases"]["CRUD"]
    count = crud["ops"].get("read", (0, 0))[0]
    return dict(requests=count, seconds=crud["time"], rps=count / crud["time"], errors=r["errors"])


def bulk_flags(w):
    """sofabench's flags for the bulk step of Iron Cushion's workload, `w` its sizes."""
    return [f"--num_connections={w['connections']}",
            f"--num_documents_per_bulk_insert={w['bulk_size']}",
            f"--num_bulk_insert_operations={w['bulk_ops']}"]


def parse_workload(text):
    """Errors, times and counts of a sofabench run of bulk inserts (and CRUD)."""
    r = parse_sofabench(text)
    ops = {op: c for p in r["phases"].values() for op, (c, _) in p["ops"].items()}
    sent = re.search(r"^BULK INSERT BENCHMARK RESULTS:\n(?:  .*\n)*?  totalJsonBytesSent=([\d,]+) bytes",
                     text, re.M)
    return dict(errors=r["errors"], bulk_seconds=r["phases"].get("BULK INSERT", {}).get("time", 0),
                crud_seconds=r["phases"].get("CRUD", {}).get("time", 0),
                crud_ops=sum(c for op, c in ops.items() if op != "bulk_insert"),
                bulk_requests=ops.get("bulk_insert", 0),
                bulk_bytes_sent=int(sent.group(1).replace(",", "")) if sent else None)


def parse_wrk(text):
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m),", text)
    if not m:
        raise ValueError("no 'requests in' line")
    requests = int(m.group(1))
    seconds = float(m.group(2)) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[m.group(3)]
    errors = 0
    s = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if s:
        errors += sum(int(x) for x in s.groups())
    n = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if n:
        errors += int(n.group(1))
    return dict(requests=requests, seconds=seconds, rps=requests / seconds, errors=errors)


def parse_oha(text):
    data = json.loads(text)
    ok = sum(v for k, v in data.get("statusCodeDistribution", {}).items() if k.startswith("2"))
    bad = sum(v for k, v in data.get("statusCodeDistribution", {}).items() if not k.startswith("2"))
    errors = data.get("errorDistribution", {})
    # Requests in flight when the time is up are cancelled: not failures of the target.
    aborted = sum(v for k, v in errors.items() if "deadline" in k)
    failed = sum(v for k, v in errors.items() if "deadline" not in k)
    seconds = data["summary"]["total"]
    return dict(requests=ok, seconds=seconds, rps=ok / seconds, errors=bad + failed,
                aborted_at_deadline=aborted)


# ----------------------------------------------------------------------------- sections


class Bench:
    def __init__(self, args, cfg, tools, out_dir):
        self.args, self.cfg, self.tools, self.out = args, cfg, tools, out_dir
        self.records = []
        self.failures = []
        self.quiet = Quiet(args.quiet_max, cfg["quiet_wait"] if args.quiet_wait is None else args.quiet_wait)
        pin = not args.no_pin and (os.cpu_count() or 1) >= 2
        self.client_cpus = {0} if pin else None
        self.server_cpus = {1} if pin else None
        self.results = open(out_dir / "results.jsonl", "a")
        self.negotiated = {}

    def record(self, section, tool, target, params, rep, run, parsed, must_be_clean=True):
        run = dict(run)
        run.pop("stdout")
        run.pop("stderr")
        rec = dict(section=section, tool=tool, target=target, rep=rep, **params, **run, **parsed)
        self.records.append(rec)
        self.results.write(json.dumps(rec) + "\n")
        self.results.flush()
        problem = None
        if rec["exit"] != 0:
            problem = f"exit {rec['exit']}"
        elif must_be_clean and rec.get("errors", 0):
            problem = f"{rec['errors']} errors"
        if problem:
            self.failures.append(f"{rec['label']}: {problem} (see {self.out}/runs/{rec['label']}.*)")
        rate = f"{rec['rps']:,.0f} req/s, " if "rps" in rec else ""
        log(f"  {rec['label']:<34} {rate}cpu {rec['cpu']:.2f}s, rss {rec['rss_kb'] / 1024:.1f} MB, "
            f"errors {rec.get('errors', '-')}, other {rec['other_cores']:.2f} cores, exit {rec['exit']}")

    def measure(self, section, tool, target, params, rep, label, cmd, server, parse, timeout,
                must_be_clean=True, env=None):
        # A run during which other processes used more than --quiet-max cores (a build that
        # started meanwhile) is repeated, up to --retries times; the last attempt counts.
        for attempt in range(self.args.retries + 1):
            run = run_measured(label, cmd, self.out, self.client_cpus, server, self.quiet, timeout,
                               env=env)
            run["attempts"] = attempt + 1
            if run["other_cores"] <= self.args.quiet_max or attempt == self.args.retries:
                break
            log(f"  {label}: disturbed (other processes used {run['other_cores']:.2f} cores); repeating")
        try:
            parsed = parse(run["stdout"]) if run["exit"] == 0 or run["stdout"].strip() else {}
        except (ValueError, KeyError, AttributeError, json.JSONDecodeError) as e:
            parsed = {}
            self.failures.append(f"{label}: cannot read its output ({e})")
        self.record(section, tool, target, params, rep, run, parsed, must_be_clean)

    def peer_runs(self, url, connections, seconds, rate=None, cacert=None):
        """(tool, cmd, parse) for wrk and oha reading PEER_PATH at `url` (http, or https with
        the certificate `cacert`)."""
        url += PEER_PATH
        out = []
        if self.tools.wrk:
            # wrk has no rate limit: under --rate it runs as fast as it can (noted). Over
            # https it checks no certificate (it has no option to).
            cmd = [self.tools.wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", url]
            out.append(("wrk", cmd, parse_wrk))
        if self.tools.oha:
            cmd = [self.tools.oha, "--no-tui", *self.tools.oha_json, "-z", f"{seconds}s",
                   "-c", str(connections)]
            if rate:
                cmd += ["-q", str(rate)]
            if cacert:
                cmd += ["--cacert", str(cacert)]
            out.append(("oha", cmd + [url], parse_oha))
        return out

    def read_rounds(self, section, rep, connections, jobs_of):
        """Reads at each connection count: every job (tool, target, server, cmd, parse) that
        jobs_of(connections, seconds) gives, once each, their order rotated per repetition."""
        d = self.cfg["duration"]
        for conns in connections:
            jobs = jobs_of(conns, d)
            shift = rep % len(jobs)
            for tool, target, server, cmd, parse in jobs[shift:] + jobs[:shift]:
                label = f"{section}-{tool.replace(' --', '-')}-{target}-c{conns}-r{rep}"
                self.measure(section, tool, target, dict(connections=conns), rep, label, cmd, server,
                             parse, timeout=d + 120)

    def reads(self, rep):
        def jobs(conns, seconds):
            cmd = sofabench_cmd(self.tools, self.couch.url(), *read_flags(conns, seconds))
            out = [("sofabench", "couch-target", self.couch, cmd, parse_reads)]
            for target, server in [("couch-target", self.couch), ("nginx", self.nginx)]:
                if server:
                    out += [(tool, target, server, pcmd, parse)
                            for tool, pcmd, parse in self.peer_runs(server.url(), conns, seconds)]
            return out

        self.read_rounds("reads", rep, self.cfg["read_connections"], jobs)

    def workload(self, rep):
        w = self.cfg["workload"]
        standard = bulk_flags(w) + [f"--num_crud_operations={w['crud_ops']}", "--create_weight=2",
                                    "--read_weight=2", "--update_weight=3", "--delete_weight=3",
                                    "--seed=1", "--recreate"]
        bulk_only = bulk_flags(w) + ["--num_crud_operations=0", "--seed=1", "--recreate"]
        jobs = [("standard", standard), ("bulk-only", bulk_only)]
        if rep % 2:
            jobs.reverse()
        docs = w["connections"] * w["bulk_ops"] * w["bulk_size"]
        for kind, flags in jobs:
            crud = w["connections"] * w["crud_ops"] if kind == "standard" else 0
            self.measure("workload", "sofabench", "couch-target",
                         dict(kind=kind, documents=docs, crud=crud), rep,
                         f"workload-{kind}-r{rep}", sofabench_cmd(self.tools, self.couch.url(), *flags),
                         self.couch, parse_workload, timeout=600)

    def tls(self, rep):
        """Reads by id and a bulk insert over https, through nginx to couch-target; the same
        without TLS through the same nginx (sofabench and wrk) for what TLS adds."""
        target = self.tls_target
        verify = ["--cacert", str(target.cert)]

        def jobs(conns, seconds):
            out = []
            for scheme in ("https", "http"):
                url = target.url(scheme)
                flags = read_flags(conns, seconds) + (verify if scheme == "https" else [])
                out.append(("sofabench", scheme, target, sofabench_cmd(self.tools, url, *flags),
                            parse_reads))
                if scheme == "https":
                    # The same run with the client's threads never sleeping (section 9 of
                    # docs/PERFORMANCE.md says why it matters where the server is the limit).
                    out.append((BUSY, scheme, target,
                                sofabench_cmd(self.tools, url, *flags, "--busy-poll"), parse_reads))
                out += [(tool, scheme, target, cmd, parse)
                        for tool, cmd, parse in self.peer_runs(
                            url, conns, seconds, cacert=target.cert if scheme == "https" else None)
                        if scheme == "https" or tool == "wrk"]
            return out

        self.read_rounds("tls", rep, self.cfg["tls_connections"], jobs)
        w = self.cfg["workload"]
        docs = w["connections"] * w["bulk_ops"] * w["bulk_size"]
        schemes = ["https", "http"][rep % 2:] + ["https", "http"][:rep % 2]
        for scheme in schemes:
            flags = bulk_flags(w) + ["--num_crud_operations=0", "--seed=1", "--recreate",
                                     f"--json_document_schema_filename={BULK_TEMPLATE}"]
            flags += verify if scheme == "https" else []
            self.measure("tls", "sofabench", scheme, dict(kind="bulk-only", documents=docs), rep,
                         f"tls-bulk-{scheme}-r{rep}",
                         sofabench_cmd(self.tools, target.url(scheme), *flags), target,
                         parse_workload, timeout=600)

    def check_negotiation(self):
        """Runs each client briefly against the TLS target's logging port and reads what
        nginx logged: {tool: [protocol suite group, ...]}. Anything but TLS_NEGOTIATED, or
        nothing, is a failure: the comparison is only fair when all encrypt the same way."""
        target = self.tls_target
        url = target.check_url()
        clients = [("sofabench", sofabench_cmd(
            self.tools, url, "--cacert", str(target.cert), "--num_connections=1",
            "--num_bulk_insert_operations=1", "--num_documents_per_bulk_insert=1",
            "--num_crud_operations=10", "--read_weight=1", "--create_weight=0",
            "--update_weight=0", "--delete_weight=0", "--recreate"))]
        clients += [(tool, cmd) for tool, cmd, _ in self.peer_runs(url, 1, 1, cacert=target.cert)]
        runs = self.out / "runs"
        runs.mkdir(exist_ok=True)
        negotiated = {}
        for tool, cmd in clients:
            logged = target.log.stat().st_size if target.log.exists() else 0
            label = f"tls-negotiation-{tool}"
            (runs / f"{label}.cmd").write_text(" ".join(cmd) + "\n")
            try:
                run = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                (runs / f"{label}.out").write_text(run.stdout + run.stderr)
            except subprocess.TimeoutExpired:
                pass
            lines = []
            if target.log.exists():
                with open(target.log, "rb") as f:
                    f.seek(logged)
                    lines = f.read().decode(errors="replace").splitlines()
            negotiated[tool] = sorted({line.split(' "', 1)[0] for line in lines})
            if negotiated[tool] != [TLS_NEGOTIATED]:
                self.failures.append(f"{label}: negotiated {negotiated[tool] or 'nothing'}, not "
                                     f"{TLS_NEGOTIATED} (see {runs / label}.*)")
            log(f"  {tool} negotiated {', '.join(negotiated[tool]) or 'nothing'}")
        return negotiated

    def generate(self, rep):
        cmd = ["cargo", "bench", "--quiet", "--bench", "generate"]
        if self.cfg["generate_documents"]:
            cmd += ["--", str(self.cfg["generate_documents"])]

        def parse(text):
            cases = re.findall(r"^\s*(.+?):\s+([\d.]+) M docs/s,\s+(\d+) MB/s,\s+(\d+) bytes/doc", text, re.M)
            if not cases:
                raise ValueError("no 'M docs/s' lines")
            return {"cases": {name: float(rate) * 1e6 for name, rate, _, _ in cases},
                    "bytes_per_doc": {name: int(b) for name, _, _, b in cases}}

        self.measure("generate", "sofabench", "-", {}, rep, f"generate-r{rep}", cmd, None, parse,
                     timeout=900)

    def connections(self, rep):
        seconds = self.cfg["scale_duration"]
        rate = self.cfg["scale_rate"]
        for conns in self.cfg["scale_connections"]:
            flags = [f"--num_connections={conns}", "--num_bulk_insert_operations=1",
                     "--num_documents_per_bulk_insert=1", "--read_weight=1", "--create_weight=0",
                     "--update_weight=0", "--delete_weight=0", f"--rate={rate}",
                     f"--duration={seconds}s", "--recreate"]

            jobs = [("sofabench", sofabench_cmd(self.tools, self.couch.url(), *flags), parse_reads)]
            jobs += self.peer_runs(self.couch.url(), conns, seconds, rate=rate)
            shift = rep % len(jobs)
            for tool, cmd, parse_fn in jobs[shift:] + jobs[:shift]:
                self.measure("connections", tool, "couch-target", dict(connections=conns), rep,
                             f"connections-{tool}-c{conns}-r{rep}", cmd, self.couch, parse_fn,
                             timeout=seconds + 300)

    def memory(self, rep):
        sizes = self.cfg["memory_sizes"]
        for n in sizes[rep % 2 :] + sizes[: rep % 2]:
            per_request = min(1000, n // 10)
            flags = ["--num_connections=10", f"--num_documents_per_bulk_insert={per_request}",
                     f"--num_bulk_insert_operations={n // (10 * per_request)}",
                     "--num_crud_operations=0", "--seed=1", "--recreate"]

            def parse(text):
                r = parse_sofabench(text)
                return dict(errors=r["errors"], bulk_seconds=r["phases"]["BULK INSERT"]["time"])

            self.measure("memory", "sofabench", "couch-target", dict(documents=n), rep,
                         f"memory-{n}-r{rep}", sofabench_cmd(self.tools, self.couch.url(), *flags),
                         self.couch, parse, timeout=900)

    def pacing(self, rep):
        seconds = self.cfg["pacing_duration"]
        for rate in self.cfg["pacing_rates"]:
            # Enough connections that none is busy at its slot: about 3 ms per read, 2x room.
            conns = max(10, rate // 150)
            jobs = ALARMS[rep % len(ALARMS):] + ALARMS[:rep % len(ALARMS)]
            for alarm in jobs:
                label = f"pacing-{alarm}-{rate}-r{rep}"
                result = self.out / "runs" / f"{label}.json"
                flags = [f"--num_connections={conns}", "--num_bulk_insert_operations=1",
                         "--num_documents_per_bulk_insert=10", "--read_weight=1", "--create_weight=0",
                         "--update_weight=0", "--delete_weight=0", f"--rate={rate}",
                         f"--duration={seconds}s", "--recreate", "--overwrite", "--json", str(result)]

                def parse(text, result=result):
                    r = parse_sofabench(text)
                    crud = json.loads(result.read_text())["phases"][-1]
                    read = next(o for o in crud["operations"] if o["operation"] == "read")
                    lag = crud["send_lag"]
                    return dict(errors=r["errors"], requests=read["succeeded"], late=crud["late"],
                                lag_p50=lag["p50_ms"], lag_p99=lag["p99_ms"], lag_max=lag["max_ms"],
                                gap_p50=read["response"]["p50_ms"] - read["latency"]["p50_ms"],
                                service_p50=read["latency"]["p50_ms"])

                env = dict(os.environ, SOFABENCH_ALARM=alarm)
                self.measure("pacing", "sofabench", "couch-target-2ms",
                             dict(rate=rate, alarm=alarm, connections=conns), rep, label,
                             sofabench_cmd(self.tools, self.slow.url(), *flags), self.slow, parse,
                             timeout=seconds + 120, env=env)

    def run(self, sections):
        self.couch = start_couch_target(self.tools.couch_target, self.server_cpus, self.out)
        self.slow = None
        self.nginx = None
        self.tls_target = None
        try:
            if "pacing" in sections:
                self.slow = start_couch_target(self.tools.couch_target, self.server_cpus, self.out,
                                               delay_ms=2)
            if "reads" in sections and self.tools.nginx:
                self.nginx = start_nginx(self.tools.nginx, self.server_cpus, self.out)
            if "tls" in sections and self.tools.nginx and self.tools.openssl:
                self.tls_target = TlsTarget(self.tools.nginx, self.tools.openssl, self.couch,
                                            self.server_cpus, self.out)
                log("== tls: what each client negotiates")
                self.negotiated = self.check_negotiation()
            elif "tls" in sections:
                sections = [s for s in sections if s != "tls"]
            for rep in range(1, self.cfg["reps"] + 1):
                for section in sections:
                    log(f"== {section}, repetition {rep} of {self.cfg['reps']}")
                    getattr(self, section)(rep)
        finally:
            for server in (self.couch, self.slow, self.nginx, self.tls_target):
                if server:
                    server.stop()


# ----------------------------------------------------------------------------- report


def med(values):
    return statistics.median(values) if values else None


def spread(values, fmt="{:,.0f}", scale=1.0):
    if not values:
        return "—"
    vs = [v * scale for v in values]
    if len(vs) == 1:
        return fmt.format(vs[0])
    return f"{fmt.format(statistics.median(vs))} ({fmt.format(min(vs))}–{fmt.format(max(vs))})"


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "—"


def read_table(add, rows, section, connections, clients, reference, cpu_limits):
    """The table of a section of reads (`clients`: (tool, target) rows in order), each tool
    against sofabench at the `reference` target; returns the goals: at 8 and 64
    connections, sofabench's requests/s at least each tool's in `cpu_limits`, and its CPU
    per request at most that limit times the tool's."""
    goals = []
    name = "reads" if section == "reads" else f"{section} reads"
    add("| conns | client @ target | requests/s | client CPU ms per 1,000 req | peak RSS MB | errors "
        "| target CPU | sofabench ÷ this: req/s | CPU/req | RSS |")
    add("|---|---|---|---|---|---|---|---|---|---|")
    for conns in connections:
        sofa = rows(section, tool="sofabench", target=reference, connections=conns)
        s_rps = med([r["rps"] for r in sofa if "rps" in r])
        s_cpu = med([r["cpu"] / r["requests"] * 1e6 for r in sofa if r.get("requests")])
        s_rss = med([r["rss_kb"] for r in sofa])
        for tool, target in clients:
            rs = rows(section, tool=tool, target=target, connections=conns)
            if not rs:
                continue
            rps = [r["rps"] for r in rs if "rps" in r]
            cpu = [r["cpu"] / r["requests"] * 1e6 for r in rs if r.get("requests")]
            rss = [r["rss_kb"] / 1024 for r in rs]
            errs = sum(r.get("errors", 0) for r in rs)
            same_target = target == reference and not tool.startswith("sofabench")
            busy = [r["server_cpu"] / r["wall"] * 100 for r in rs]
            add(f"| {conns} | {tool} @ {target} | {spread(rps)} | {spread(cpu, '{:.1f}')} | "
                f"{spread(rss, '{:.1f}')} | {errs} | {med(busy):.0f} % | "
                + (f"{ratio(s_rps, med(rps))} | {ratio(s_cpu, med(cpu))} | {ratio(s_rss, med(rss) * 1024)} |"
                   if same_target else "| | |"))
            limit = cpu_limits.get(tool)
            if same_target and limit and conns in (8, 64) and s_rps is not None and rps and cpu:
                goals.append((f"{name}, {conns} connections: sofabench requests/s ≥ {tool}'s",
                              s_rps >= med(rps),
                              f"{s_rps:,.0f} vs {med(rps):,.0f} req/s (×{s_rps / med(rps):.2f})"))
                goals.append((f"{name}, {conns} connections: client CPU per request ≤ {limit}× {tool}'s",
                              s_cpu <= limit * med(cpu),
                              f"{s_cpu:.1f} vs {med(cpu):.1f} ms per 1,000 (×{s_cpu / med(cpu):.2f})"))
    return goals


def busy_poll_goals(rows, connections):
    """The tls goals again for sofabench with --busy-poll against wrk, both over https."""
    goals = []
    for conns in connections:
        busy = rows("tls", tool=BUSY, target="https", connections=conns)
        wrk = rows("tls", tool="wrk", target="https", connections=conns)
        b_rps, w_rps = med([r["rps"] for r in busy if "rps" in r]), med([r["rps"] for r in wrk if "rps" in r])
        b_cpu = med([r["cpu"] / r["requests"] * 1e6 for r in busy if r.get("requests")])
        w_cpu = med([r["cpu"] / r["requests"] * 1e6 for r in wrk if r.get("requests")])
        if None in (b_rps, w_rps, b_cpu, w_cpu):
            continue
        goals.append((f"tls reads, {conns} connections: {BUSY} requests/s ≥ wrk's", b_rps >= w_rps,
                      f"{b_rps:,.0f} vs {w_rps:,.0f} req/s (×{b_rps / w_rps:.2f})"))
        goals.append((f"tls reads, {conns} connections: {BUSY} client CPU per request ≤ 1.2× wrk's",
                      b_cpu <= 1.2 * w_cpu,
                      f"{b_cpu:.1f} vs {w_cpu:.1f} ms per 1,000 (×{b_cpu / w_cpu:.2f})"))
    return goals


def tls_report(add, rows, load_line, cfg, negotiated):
    """The tls section's tables (reads, what TLS adds, bulk insert); returns its goals."""
    add(f"### Over TLS: reads by id and bulk insert through nginx ({TLS_NEGOTIATED})")
    add("")
    if negotiated:
        add("Negotiated, as nginx logged it for each client before the runs: "
            + "; ".join(f"{tool} {', '.join(ways) or 'nothing'}" for tool, ways in negotiated.items())
            + ".")
        add("")
    goals = read_table(add, rows, "tls", cfg["tls_connections"],
                       [("sofabench", "https"), (BUSY, "https"), ("wrk", "https"), ("oha", "https"),
                        ("sofabench", "http"), ("wrk", "http")],
                       "https", {"wrk": 1.2})
    goals += busy_poll_goals(rows, cfg["tls_connections"])
    add("")

    def cpu_per_request(tool, scheme, conns):
        return med([r["cpu"] / r["requests"] * 1e6
                    for r in rows("tls", tool=tool, target=scheme, connections=conns) if r.get("requests")])

    for conns in cfg["tls_connections"]:
        added = []
        for tool in ("sofabench", "wrk"):
            https, http = cpu_per_request(tool, "https", conns), cpu_per_request(tool, "http", conns)
            if https is not None and http is not None:
                added.append(f"{tool} {https - http:+.1f} µs ({http:.1f} → {https:.1f})")
        if added:
            add(f"- what TLS adds to the client's CPU per request, {conns} connections (https − http "
                f"through the same nginx, medians): {'; '.join(added)}")
    bulk = {scheme: rows("tls", tool="sofabench", target=scheme, kind="bulk-only")
            for scheme in ("https", "http")}
    w = cfg["workload"]
    docs = w["connections"] * w["bulk_ops"] * w["bulk_size"]
    if bulk["https"] or bulk["http"]:
        add("")
        add(f"Bulk insert only ({w['connections']} connections × {w['bulk_ops']} × {w['bulk_size']:,} "
            f"documents, {docs:,} in all):")
        add("")
        add("| scheme | client user+sys s | client CPU µs per document | bytes sent per document "
            "| peak RSS MB | bulk timeTaken s | errors |")
        add("|---|---|---|---|---|---|---|")
        for scheme, rs in bulk.items():
            sent = [r["bulk_bytes_sent"] / docs for r in rs if r.get("bulk_bytes_sent")]
            add(f"| {scheme} | {spread([r['cpu'] for r in rs], '{:.3f}')} | "
                f"{spread([r['cpu'] / docs * 1e6 for r in rs], '{:.2f}')} | {spread(sent, '{:.0f}')} | "
                f"{spread([r['rss_kb'] / 1024 for r in rs], '{:.1f}')} | "
                f"{spread([r.get('bulk_seconds', 0) for r in rs], '{:.3f}')} | "
                f"{sum(r.get('errors', 0) for r in rs)} |")
        per_doc = med([r["cpu"] / docs * 1e6 for r in bulk["https"]])
        if per_doc is not None:
            goals.append(("bulk insert over TLS ≤ 2 µs client CPU per inserted document", per_doc <= 2.0,
                          f"{per_doc:.2f} µs (whole process incl. start-up and handshakes)"))
    add("")
    load_line("tls")
    add("https: every client over TLS to nginx, which answers the reads itself (the 250 bytes of "
        "bench/document.json) and passes the rest (sofabench's setup, the bulk inserts) on to "
        "couch-target over kept-alive connections; http: the same nginx without TLS. sofabench checks the run's "
        "self-signed certificate (--cacert), and so does oha; wrk checks none (it cannot). Target CPU is nginx's "
        "and couch-target's together, both on the target's core. CPU per request and per document: "
        "the client's user+sys for the whole process, setup included (for sofabench's reads, its "
        "100-document bulk insert per connection too).")
    add("")
    return goals


def report(records, context, cfg, failures, notes):
    lines = []
    add = lines.append
    add(f"Run of {context['date']} on {context['machine']}; {context['pinning']}.")
    add(f"Versions: {', '.join(f'{k} {v}' for k, v in context['versions'].items())}.")
    add(f"Command: `{context['command']}`; {cfg['reps']} repetition(s), medians with (min–max).")
    others = [r["other_cores"] for r in records]
    busy = [r["busy_before"] for r in records]
    if records:
        noisy = sum(1 for r in records if not r["quiet"])
        repeated = sum(r.get("attempts", 1) - 1 for r in records)
        add(f"Machine load: before the runs {min(busy):.2f}–{max(busy):.2f} cores busy (1-s sample), "
            f"load average {records[0]['load_before']} at the first run and {records[-1]['load_before']} "
            f"at the last; CPU used by other processes during runs: median {med(others):.2f}, max "
            f"{max(others):.2f} cores; {noisy} of {len(records)} runs started on a busy machine; "
            f"{repeated} runs were repeated because something else ran meanwhile.")
    for note in notes:
        add(f"Note: {note}.")
    add("")

    def load_line(section):
        rs = [r for r in records if r["section"] == section]
        if rs:
            o = [r["other_cores"] for r in rs]
            add(f"Load during these {len(rs)} runs: other processes used median {med(o):.2f}, max "
                f"{max(o):.2f} cores; {sum(1 for r in rs if not r['quiet'])} runs started on a busy machine.")
            add("")

    def rows(section, **match):
        return [r for r in records if r["section"] == section and r.get("exit") == 0 and
                all(r.get(k) == v for k, v in match.items())]

    goals = []
    # Reads
    reads = [r for r in records if r["section"] == "reads"]
    if reads:
        add("### Reads: GET of a 250-byte document by id")
        add("")
        goals += read_table(add, rows, "reads", cfg["read_connections"],
                            [("sofabench", "couch-target"), ("wrk", "couch-target"),
                             ("oha", "couch-target"), ("wrk", "nginx"), ("oha", "nginx")],
                            "couch-target", {"wrk": 1.2, "oha": 1.0})
        add("")
        load_line("reads")
        add("CPU per request is the client's user+sys for the whole process divided by the requests "
            "it completed (for sofabench: the reads of the CRUD step; its setup and 100-document bulk "
            "insert per connection are in the CPU too). Target CPU is the target's user+sys over the "
            "client's wall time (100 % = the one core it is pinned to). Ratios are of the medians; below 1 is better "
            "for sofabench in CPU and RSS, above 1 in requests/s. sofabench cannot run against nginx "
            "(it needs CouchDB's setup answers); the nginx rows show the peers against a static server.")
        add("")
    # Workload
    wl = rows("workload")
    if wl:
        std = [r for r in wl if r["kind"] == "standard"]
        bulk = [r for r in wl if r["kind"] == "bulk-only"]
        w = cfg["workload"]
        docs = w["connections"] * w["bulk_ops"] * w["bulk_size"]
        crud = w["connections"] * w["crud_ops"]
        add(f"### Iron Cushion's workload against couch-target ({w['connections']} connections × "
            f"{w['bulk_ops']} × {w['bulk_size']:,} bulk, {w['connections']} × {w['crud_ops']:,} CRUD, 2/2/3/3)")
        add("")
        add("| run | client user+sys s | peak RSS MB | wall s | errors | bulk timeTaken s | CRUD timeTaken s |")
        add("|---|---|---|---|---|---|---|")
        for name, rs in [("standard (bulk + CRUD)", std), ("bulk step only", bulk)]:
            add(f"| {name} | {spread([r['cpu'] for r in rs], '{:.3f}')} | "
                f"{spread([r['rss_kb'] / 1024 for r in rs], '{:.1f}')} | {spread([r['wall'] for r in rs], '{:.2f}')} | "
                f"{sum(r.get('errors', 0) for r in rs)} | {spread([r.get('bulk_seconds', 0) for r in rs], '{:.3f}')} | "
                f"{spread([r.get('crud_seconds', 0) for r in rs], '{:.3f}')} |")
        add("")
        load_line("workload")
        per_doc = [r["cpu"] / docs * 1e6 for r in bulk]
        per_op = [r["cpu"] / (docs + crud) * 1e6 for r in std]
        add(f"- client CPU per operation of the standard run ({docs:,} documents + {crud:,} CRUD): "
            f"{spread(per_op, '{:.2f}')} µs")
        add(f"- client CPU per bulk-inserted document (bulk step only, whole process): {spread(per_doc, '{:.2f}')} µs")
        if std and bulk:
            per_crud = (med([r["cpu"] for r in std]) - med([r["cpu"] for r in bulk])) / crud * 1e6
            add(f"- client CPU per CRUD operation (median standard − median bulk only) / {crud:,}: {per_crud:.1f} µs")
        add("")
        goals.append(("bulk insert ≤ 2 µs client CPU per inserted document", med(per_doc) <= 2.0,
                      f"{med(per_doc):.2f} µs (bulk step only, whole process incl. start-up)"))
        if w["crud_ops"] == FULL["workload"]["crud_ops"]:
            goals.append(("peak memory ≤ 30 MB for the standard run", med([r["rss_kb"] for r in std]) <= 30 * 1024,
                          f"{med([r['rss_kb'] for r in std]) / 1024:.1f} MB"))
    # Generation
    gen = rows("generate")
    if gen:
        add("### Document generation (cargo bench --bench generate, one core)")
        add("")
        add("| case | documents/s | bytes/doc |")
        add("|---|---|---|")
        for case in gen[0].get("cases", {}):
            add(f"| {case} | {spread([r['cases'][case] for r in gen if case in r.get('cases', {})], '{:,.0f}')} | "
                f"{gen[0]['bytes_per_doc'][case]} |")
        add("")
    if gen:
        load_line("generate")
    # Connections
    conn = [r for r in records if r["section"] == "connections"]
    if conn:
        add(f"### Connection scale against couch-target ({cfg['scale_rate']:,} requests/s in total, "
            f"{cfg['scale_duration']} s)")
        add("")
        add("| conns | client | requests/s | errors | peak RSS MB | client CPU s | CPU ms per 1,000 req | "
            "sofabench ÷ this: RSS | CPU |")
        add("|---|---|---|---|---|---|---|---|---|")
        for conns in cfg["scale_connections"]:
            sofa = rows("connections", tool="sofabench", connections=conns)
            s_rss = med([r["rss_kb"] for r in sofa])
            s_cpu = med([r["cpu"] for r in sofa])
            for tool in ["sofabench", "oha", "wrk"]:
                rs = [r for r in conn if r["tool"] == tool and r["connections"] == conns]
                if not rs:
                    continue
                ok = [r for r in rs if r["exit"] == 0]
                errs = sum(r.get("errors", 0) for r in rs)
                name = tool + (" (no rate limit)" if tool == "wrk" else "")
                add(f"| {conns:,} | {name} | {spread([r['rps'] for r in ok if 'rps' in r])} | {errs}"
                    f"{'' if len(ok) == len(rs) else f' ({len(rs) - len(ok)} runs failed)'} | "
                    f"{spread([r['rss_kb'] / 1024 for r in rs], '{:.1f}')} | {spread([r['cpu'] for r in rs], '{:.2f}')} | "
                    f"{spread([r['cpu'] / r['requests'] * 1e6 for r in ok if r.get('requests')], '{:.1f}')} | "
                    + (f"{ratio(s_rss, med([r['rss_kb'] for r in rs]))} | {ratio(s_cpu, med([r['cpu'] for r in rs]))} |"
                       if tool != "sofabench" else " | |"))
            if conns == 10000 and sofa:
                errs = sum(r.get("errors", 0) for r in rows("connections", tool="sofabench", connections=conns))
                failed = len([r for r in conn if r["tool"] == "sofabench" and r["connections"] == conns]) - len(sofa)
                goals.append(("10,000 connections: 0 errors, ≤ 300 MB",
                              errs == 0 and failed == 0 and s_rss <= 300 * 1024,
                              f"{errs} errors, {failed} failed runs, {s_rss / 1024:.1f} MB"))
        add("")
        load_line("connections")
        add("wrk (not wrk2) has no rate limit: it runs flat out with the same connections, so its row "
            "shows what holding them costs at full speed, not at the rate.")
        add("")
    # Memory
    mem = rows("memory")
    if mem:
        add("### Memory per live document (bulk insert only, 10 connections)")
        add("")
        add("| documents | peak RSS MB | client user+sys s | bulk timeTaken s | errors |")
        add("|---|---|---|---|---|")
        sizes = sorted({r["documents"] for r in mem})
        for n in sizes:
            rs = [r for r in mem if r["documents"] == n]
            add(f"| {n:,} | {spread([r['rss_kb'] / 1024 for r in rs], '{:.1f}')} | {spread([r['cpu'] for r in rs], '{:.3f}')} | "
                f"{spread([r['bulk_seconds'] for r in rs], '{:.3f}')} | {sum(r.get('errors', 0) for r in rs)} |")
        add("")
        load_line("memory")
        for a, b in zip(sizes, sizes[1:]):
            ra = med([r["rss_kb"] for r in mem if r["documents"] == a])
            rb = med([r["rss_kb"] for r in mem if r["documents"] == b])
            ca = med([r["cpu"] for r in mem if r["documents"] == a])
            cb = med([r["cpu"] for r in mem if r["documents"] == b])
            per_doc = (rb - ra) * 1024 / (b - a)
            add(f"- {a:,} → {b:,}: ({rb:,} − {ra:,}) KB × 1024 / {b - a:,} = **{per_doc:.1f} bytes per live "
                f"document**; CPU {(cb - ca) / (b - a) * 1e6:.2f} µs per added document")
            goals.append((f"≤ 64 bytes per live document ({a:,} → {b:,})", per_doc <= 64, f"{per_doc:.1f} bytes"))
        add("")
    # Pacing
    pacing = rows("pacing")
    if pacing:
        add(f"### The open model's send lag: --rate against couch-target --delay-ms 2 "
            f"({cfg['pacing_duration']} s of reads)")
        add("")
        add("| rate/s | conns | waits on | send lag p50 ms | p99 ms | max ms | response p50 − service p50 ms "
            "| late | client CPU cores | errors |")
        add("|---|---|---|---|---|---|---|---|---|---|")
        for rate in cfg["pacing_rates"]:
            cpu_of = {}
            for alarm in ALARMS:
                rs = rows("pacing", rate=rate, alarm=alarm)
                if not rs:
                    continue
                cores = [r["cpu"] / r["wall"] for r in rs]
                cpu_of[alarm] = med(cores)
                add(f"| {rate:,} | {rs[0]['connections']} | {alarm} | "
                    f"{spread([r['lag_p50'] for r in rs], '{:.3f}')} | {spread([r['lag_p99'] for r in rs], '{:.3f}')} | "
                    f"{spread([r['lag_max'] for r in rs], '{:.3f}')} | {spread([r['gap_p50'] for r in rs], '{:.3f}')} | "
                    f"{sum(r['late'] for r in rs)} | {spread(cores, '{:.3f}')} | {sum(r.get('errors', 0) for r in rs)} |")
            default = rows("pacing", rate=rate, alarm="thread")
            if default:
                p99 = med([r["lag_p99"] for r in default])
                gap = med([r["gap_p50"] for r in default])
                goals.append((f"--rate {rate:,}: send lag p99 < 0.1 ms", p99 < 0.1, f"{p99:.3f} ms"))
                goals.append((f"--rate {rate:,}: response p50 within 0.3 ms of service p50", gap < 0.3,
                              f"{gap:.3f} ms"))
                if "tokio" in cpu_of and rate >= 10000:
                    extra = cpu_of["thread"] - cpu_of["tokio"]
                    goals.append((f"--rate {rate:,}: precise waiting costs ≤ 0.2 cores more than tokio's timer",
                                  extra <= 0.2, f"{extra:+.3f} cores"))
        add("")
        load_line("pacing")
        add("Send lag: from an operation's scheduled start to the moment its connection began it "
            "(sofabench's own figure, the result file's send_lag). Client CPU: user+sys of the whole "
            "process over its wall time, setup and bulk step included. The timer thread is sofabench's "
            "default; timerfd and tokio are SOFABENCH_ALARM's alternatives, measured for the choice.")
        add("")
    if rows("tls") or context.get("negotiated"):
        goals += tls_report(add, rows, load_line, cfg, context.get("negotiated", {}))
    if goals:
        add("### Goals")
        add("")
        add("| goal | met? | measured |")
        add("|---|---|---|")
        for goal, met, figure in goals:
            add(f"| {goal} | {'met' if met else '**missed**'} | {figure} |")
        add("")
    if failures:
        add("### Failed runs")
        add("")
        for f in failures:
            add(f"- {f}")
        add("")
    return "\n".join(lines)


def machine_text():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({model}), Linux {platform.release()}"


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for wanted in (65536, hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(wanted, soft), max(wanted, hard)))
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--smoke", action="store_true", help="seconds-long check that the harness works")
    p.add_argument("--sections", default=",".join(SECTIONS))
    p.add_argument("--reps", type=int)
    p.add_argument("--duration", type=int, help="seconds of each read run")
    p.add_argument("--scale", help="connection counts of the connections section, e.g. 1000,10000")
    p.add_argument("--out", help="directory for the results (default: a new one in /tmp)")
    p.add_argument("--no-pin", action="store_true", help="do not pin target and clients to cores")
    p.add_argument("--quiet-max", type=float, default=0.3,
                   help="a machine using more cores than this (1-s sample) is busy (default 0.3)")
    p.add_argument("--quiet-wait", type=float, help="seconds to wait for a quiet machine before a run")
    p.add_argument("--retries", type=int,
                   help="repeat a run during which other processes used more than --quiet-max cores "
                        "up to this many times (default 2; --smoke: 0)")
    args = p.parse_args()
    cfg = dict(SMOKE if args.smoke else FULL)
    if args.reps:
        cfg["reps"] = args.reps
    if args.duration:
        cfg["duration"] = args.duration
    if args.retries is None:
        args.retries = cfg["retries"]
    if args.scale:
        cfg["scale_connections"] = [int(x) for x in args.scale.split(",")]
    sections = [s for s in args.sections.split(",") if s]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        p.error(f"unknown sections {unknown}; choose from {SECTIONS}")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="sofabench-bench."))
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o755)
    fds = raise_fd_limit()
    if "connections" in sections and max(cfg["scale_connections"]) + 100 > fds:
        log(f"open files limited to {fds}: the connections section needs more; raise ulimit -n")

    tools = Tools(args)
    for note in tools.notes:
        log(f"NOTE: {note}")
    tools.build()
    if "generate" in sections:
        log("building the generate bench (cargo bench --no-run)")
        subprocess.run(["cargo", "bench", "--quiet", "--bench", "generate", "--no-run"], cwd=ROOT,
                       check=True, stderr=subprocess.DEVNULL)
    bench = Bench(args, cfg, tools, out)
    pin = ("target pinned to core 1, clients to core 0" if bench.client_cpus else "nothing pinned")
    context = dict(
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        machine=machine_text(),
        pinning=pin,
        versions=tools.versions(),
        command="python3 bench/bench.py " + " ".join(sys.argv[1:]),
    )
    log(f"results in {out}; {pin}; open files limit {fds}")
    os.chdir(ROOT)
    started = time.monotonic()
    try:
        bench.run(sections)
    except KeyboardInterrupt:
        bench.failures.append("interrupted")
    context["negotiated"] = bench.negotiated
    text = report(bench.records, context, cfg, bench.failures, tools.notes)
    (out / "report.md").write_text(text + "\n")
    (out / "context.json").write_text(json.dumps(context, indent=2) + "\n")
    print(text)
    log(f"took {time.monotonic() - started:.0f} s; results in {out}")
    if bench.failures:
        log(f"{len(bench.failures)} run(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
