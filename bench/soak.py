#!/usr/bin/env python3
"""Load and soak runs of the mitm-proxy binary (issue 18). Beside the benchmark; not run in CI.

    scripts/build-release
    python3 bench/soak.py                                   # every phase at full size (about an hour on 2 cores)
    python3 bench/soak.py --phases soak --requests 200000   # one phase, smaller

Phases (--phases, comma-separated; all by default):
  concurrent  --concurrent intercepted connections (10,000) open at once: each does CONNECT, TLS with the forged
              certificate, one GET /200b, and stays open until all are established; every one must be served.
              Then all close, and the proxy's descriptors must come back to their baseline.
  soak        --requests requests (1,000,000) in rounds of --round-seconds: keep-alive (32 connections sending
              back to back), then new connections (16 workers, one request per TCP+TLS connection) for a quarter
              of that time. The proxy's RSS after the warm-up round and at the end (flat: within --rss-tolerance),
              and its descriptors back to their baseline once the load stops.
  signals     for SIGTERM and SIGINT: a proxy with --har, --report and --events under keep-alive and
              new-connection load gets the signal after --signal-after seconds; it must exit 0 and leave a HAR
              that is JSON (HAR 1.2 when jsonschema is importable) with one entry per `response` line of the events
              file, every events line JSON, and a report with "final": true.
  records     --records-requests keep-alive requests (500,000; 32 connections) with --har, --events and --report to
              files in the temporary folder, after the same load through a proxy without them: nothing may be
              dropped (no warning at exit, no `_droppedEvents` in the HAR, no `droppedEvents` in the report), the HAR
              must hold one entry per `response` line of the events file and at least one per request the load
              generator counted, and the requests/s of both runs are printed side by side.

The origin is nginx (bench/nginx/origin.conf.in) with the benchmark's throwaway PKI; the load generator is
bench/loadgen.c (built with gcc into .build/bench-loadgen when missing or older than its source). Everything
runs on 127.0.0.1 on kernel-chosen ports, every run is bounded in time, and every process started is stopped
by its pid. The open-files limit is raised to its hard limit: the proxy needs two descriptors per intercepted
connection (client and upstream), so --concurrent N needs a hard limit above 2N (`ulimit -Hn`).
Prints one line per measurement and a summary; exit status 0 when every check held, 1 when one did not,
2 when the run could not be set up.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402  (the benchmark's process, nginx and load-generator helpers)

SCHEMA = ROOT / "Tests" / "MITMProxyTests" / "Fixtures" / "har-1.2.schema.json"
ORIGIN = bench.ORIGIN_NAME


def log(message: str) -> None:
    print(f"soak: {message}", flush=True)


def descriptors(pid: int) -> tuple[int, int]:
    """(open descriptors, of which sockets) of `pid`."""
    directory = f"/proc/{pid}/fd"
    total = sockets = 0
    for name in os.listdir(directory):
        total += 1
        try:
            if os.readlink(f"{directory}/{name}").startswith("socket:"):
                sockets += 1
        except OSError:
            pass
    return total, sockets


def descriptor_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    return 0


def wait_until(condition, seconds: float, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


class Run:
    """The origin, the load generator, and fresh proxies on demand."""

    def __init__(self, args: argparse.Namespace, work: Path, processes: bench.Processes) -> None:
        self.args = args
        self.work = work
        self.processes = processes
        self.pki = work / "pki"
        subprocess.run(["bash", str(HERE / "make-pki.sh"), str(self.pki)], check=True)
        www = work / "www"
        www.mkdir()
        (www / "200b").write_bytes(b"x" * 199 + b"\n")
        os.chmod(www, 0o755)
        os.chmod(www / "200b", 0o644)
        self.origin = bench.start_nginx("origin", HERE / "nginx" / "origin.conf.in", work / "origin",
                                        {"WORKERS": str(os.cpu_count() or 2), "PKI": str(self.pki), "WWW": str(www)},
                                        processes, args.nginx)
        self.runner = bench.Runner(args.loadgen, self.origin, work, timeout=args.load_timeout)
        self.proxies = 0
        self.checks: list[tuple[str, bool, str]] = []

    def check(self, name: str, held: bool, detail: str) -> None:
        self.checks.append((name, held, detail))
        log(f"{'ok  ' if held else 'FAIL'} {name}: {detail}")

    def proxy(self, extra: list[str] | None = None) -> bench.Peer:
        """A fresh proxy, warmed up (16 connections, one request each), with its descriptor baseline taken once only
        its listener is a socket again (the warm-up's upstream connections leave the pool after 15 s)."""
        self.proxies += 1
        server = bench.start_mitm_proxy(self.args.binary, self.work / f"proxy-{self.proxies}", self.pki, [ORIGIN],
                                        self.processes, extra=extra)
        peer = bench.Peer("mitm-proxy", server, server.port, explicit=True)
        bench.warm_up(self.runner, peer)
        if not wait_until(lambda: descriptors(server.process.pid)[1] == 1, 60):
            raise bench.BenchError(f"the warm-up's sockets stayed open: {descriptors(server.process.pid)}")
        return peer

    def loadgen(self, peer: bench.Peer, mode: str, concurrency: int, seconds: float, **more) -> dict:
        arguments = ["--mode", mode, *self.runner.target_arguments(peer), "--path", "/200b",
                     "--concurrency", str(concurrency), "--warmup", "0", "--duration", str(seconds)]
        for key, value in more.items():
            arguments += [f"--{key}", str(value)]
        return self.runner.run(peer, arguments)

    def stop(self, peer: bench.Peer) -> int:
        process = peer.server.process
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()


def phase_concurrent(run: Run) -> None:
    count = run.args.concurrent
    peer = run.proxy()
    pid = peer.server.process.pid
    baseline, _ = descriptors(pid)
    limit = descriptor_limit(pid)
    if limit < 2 * count + baseline + 16:
        run.check("concurrent: descriptor limit", False,
                  f"the proxy may open {limit} descriptors; {count:,} intercepted connections need about "
                  f"{2 * count + baseline + 16:,} (a client and an upstream socket each): raise the hard limit "
                  f"(ulimit -Hn, or CAP_SYS_RESOURCE) or ask for fewer with --concurrent")
        run.stop(peer)
        return
    rss_before = peer.server.rss_kb()
    seen: dict = {}
    started = time.monotonic()

    def on_held(result: dict) -> None:  # every connection is established and answered: measure before closing
        seen["seconds"] = time.monotonic() - started
        seen["rss"] = peer.server.rss_kb()
        seen["descriptors"] = descriptors(pid)[0]
        seen["cpu"] = peer.server.cpu_us()

    arguments = ["--mode", "hold", *run.runner.target_arguments(peer), "--path", "/200b", "--count", str(count),
                 "--concurrency", str(run.args.opening), "--duration", str(run.args.load_timeout), "--stall", "30",
                 "--timeout", "60"]
    cpu_before = peer.server.cpu_us()
    result = run.runner.run(peer, arguments, on_held=on_held)
    held, errors = result.get("held", 0), result.get("errors", 0)
    run.check("concurrent: all served", held == count and errors == 0,
              f"{held:,} of {count:,} connections established and answered at once, {errors} errors, "
              f"in {seen.get('seconds', 0):.1f} s; proxy CPU {(seen.get('cpu', cpu_before) - cpu_before) / 1e6:.1f} s")
    if "rss" in seen:
        log(f"holding {held:,}: RSS {rss_before / 1024:.1f} -> {seen['rss'] / 1024:.1f} MiB "
            f"({(seen['rss'] - rss_before) / max(1, held):.1f} KiB per connection), {seen['descriptors']:,} descriptors "
            f"(baseline {baseline})")
    back = wait_until(lambda: descriptors(pid)[0] == baseline, 60)
    run.check("concurrent: descriptors back", back,
              f"{descriptors(pid)[0]} descriptors after the connections closed, baseline {baseline}; "
              f"RSS {peer.server.rss_kb() / 1024:.1f} MiB")
    run.check("concurrent: proxy alive", peer.server.alive(), "still running after the load")
    run.stop(peer)


def phase_soak(run: Run) -> None:
    args = run.args
    extra = ["--report", str(run.work / "soak-report.json")]
    if args.record:
        extra += ["--har", str(run.work / "soak.har"), "--events", str(run.work / "soak-events.jsonl")]
    peer = run.proxy(extra)
    pid = peer.server.process.pid
    baseline, _ = descriptors(pid)
    total = errors = rounds = 0
    warm_rss = None
    peak_rss = 0
    cpu_start = peer.server.cpu_us()
    started = time.monotonic()
    log(f"soak: {args.requests:,} requests in rounds of {args.round_seconds:g} s keep-alive (32 connections) + "
        f"{args.round_seconds / 4:g} s new connections (16 workers); baseline {baseline} descriptors")
    log(f"{'round':>5} {'requests':>10} {'req/s':>7} {'errors':>6} {'RSS MiB':>8} {'descriptors':>11} {'CPU µs/req':>10}")
    while total < args.requests:
        rounds += 1
        cpu_before = peer.server.cpu_us()
        keepalive = run.loadgen(peer, "keepalive", 32, args.round_seconds)
        newconn = run.loadgen(peer, "newconn", 16, args.round_seconds / 4)
        done = keepalive["requests"] + newconn["requests"]
        total += done
        errors += keepalive["errors"] + newconn["errors"]
        rss = peer.server.rss_kb()
        peak_rss = max(peak_rss, rss)
        if warm_rss is None:
            warm_rss = rss
        seconds = keepalive["seconds"] + newconn["seconds"]
        log(f"{rounds:>5} {total:>10,} {done / seconds if seconds else 0:>7,.0f} {errors:>6} {rss / 1024:>8.1f} "
            f"{descriptors(pid)[0]:>11,} {(peer.server.cpu_us() - cpu_before) / max(1, done):>10.1f}")
    end_rss = peer.server.rss_kb()
    elapsed = time.monotonic() - started
    growth = (end_rss - warm_rss) / warm_rss if warm_rss else 0.0
    run.check("soak: requests", errors == 0,
              f"{total:,} requests in {elapsed:.0f} s ({total / elapsed:,.0f}/s), {errors} errors, "
              f"proxy CPU {(peer.server.cpu_us() - cpu_start) / 1e6:.0f} s")
    run.check("soak: RSS flat after warm-up", growth <= args.rss_tolerance,
              f"{warm_rss / 1024:.1f} MiB after the warm-up round, {end_rss / 1024:.1f} MiB at the end "
              f"({growth:+.1%}), peak {peak_rss / 1024:.1f} MiB (tolerance {args.rss_tolerance:.0%})")
    back = wait_until(lambda: descriptors(pid)[0] == baseline, 60)
    run.check("soak: descriptors back", back, f"{descriptors(pid)[0]} once the load stopped, baseline {baseline}")
    status = run.stop(peer)
    run.check("soak: clean exit", status == 0, f"exit status {status} on SIGTERM")


def phase_signals(run: Run) -> None:
    for number in (signal.SIGTERM, signal.SIGINT):
        name = signal.Signals(number).name
        files = run.work / f"signal-{name}"
        files.mkdir()
        har, report, events = files / "run.har", files / "report.json", files / "events.jsonl"
        peer = run.proxy(["--har", str(har), "--report", str(report), "--events", str(events)])
        process = peer.server.process
        loads = [subprocess.Popen([run.args.loadgen, "--mode", mode, *run.runner.target_arguments(peer), "--path", "/200b",
                                   "--concurrency", str(concurrency), "--warmup", "0", "--duration", "120"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for mode, concurrency in (("keepalive", 32), ("newconn", 16))]
        for load in loads:
            run.processes.add(load)
        time.sleep(run.args.signal_after)  # the load's length before the signal, not a wait for something
        in_flight = descriptors(process.pid)[1] - 1
        process.send_signal(number)
        try:
            status = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        for load in loads:
            load.terminate()
            load.wait()
        problems = []
        try:
            har_json = json.loads(har.read_text())
            entries = len(har_json["log"]["entries"])
            try:
                import jsonschema
                jsonschema.Draft7Validator(json.loads(SCHEMA.read_text())).validate(har_json)
            except ImportError:
                pass
        except Exception as error:  # noqa: BLE001 - any failure to read it is the finding
            problems.append(f"HAR: {type(error).__name__}: {str(error)[:200]}")
            entries = -1
        lines = events.read_text().splitlines() if events.exists() else []
        parsed = []
        for line in lines:
            try:
                parsed.append(json.loads(line))
            except ValueError:
                problems.append(f"events: a line is not JSON: {line[:120]!r}")
                break
        responses = sum(1 for line in parsed if line.get("type") == "response")
        if entries >= 0 and responses != entries:
            problems.append(f"{entries:,} HAR entries but {responses:,} response lines in the events")
        try:
            final = json.loads(report.read_text()).get("final")
            if final is not True:
                problems.append(f'report: "final" is {final}')
        except Exception as error:  # noqa: BLE001
            problems.append(f"report: {type(error).__name__}: {str(error)[:200]}")
        if status != 0:
            problems.append(f"exit status {status}")
        run.check(f"signals: {name} under load", not problems,
                  "; ".join(problems) or f"exit 0 with {in_flight} connections open; HAR valid with {entries:,} entries "
                  f"= {responses:,} response lines of {len(lines):,} events lines, all JSON; report final")


def count_records(har: Path, events: Path) -> tuple[int, int, int | None]:
    """(HAR entries, `response` lines of the events file, the HAR's `_droppedEvents`) read line by line: the writer
    puts the header and every entry on a line of its own, and the files are too large to parse whole."""
    entries = -1  # the header's line starts with `{` too
    dropped = None
    with har.open("rb") as lines:
        for line in lines:
            if line.startswith(b"{"):
                entries += 1
            elif b'"_droppedEvents":' in line:
                dropped = int(line.split(b'"_droppedEvents":', 1)[1].split(b",", 1)[0].split(b"}", 1)[0])
    responses = 0
    with events.open("rb") as lines:
        for line in lines:
            if b'"type":"response"' in line:
                responses += 1
    return entries, responses, dropped


def records_load(run: Run, extra: list[str] | None) -> tuple[bench.Peer, int, float, float]:
    """A fresh proxy with `extra`, --records-requests keep-alive requests through it (rounds of --round-seconds):
    (the proxy, requests, seconds, proxy CPU µs per request)."""
    peer = run.proxy(extra)
    total = 0
    seconds = 0.0
    cpu_before = peer.server.cpu_us()
    while total < run.args.records_requests:
        result = run.loadgen(peer, "keepalive", 32, run.args.round_seconds)
        total += result["requests"]
        seconds += result["seconds"]
        if result["errors"]:
            run.check("records: requests", False, f"{result['errors']} errors")
    return peer, total, seconds, (peer.server.cpu_us() - cpu_before) / max(1, total)


def phase_records(run: Run) -> None:
    plain, plain_total, plain_seconds, plain_cpu = records_load(run, [])
    plain_rate = plain_total / plain_seconds
    run.stop(plain)
    log(f"records: without outputs {plain_total:,} requests, {plain_rate:,.0f}/s, proxy {plain_cpu:.1f} µs/request")
    files = run.work / "records"
    files.mkdir()
    har, report, events = files / "run.har", files / "report.json", files / "events.jsonl"
    peer, total, seconds, cpu = records_load(run, ["--har", str(har), "--report", str(report), "--events", str(events)])
    rate = total / seconds
    log(f"records: with --har --events --report {total:,} requests, {rate:,.0f}/s ({rate / plain_rate - 1:+.1%}), "
        f"proxy {cpu:.1f} µs/request ({cpu / plain_cpu - 1:+.1%})")
    status = run.stop(peer)
    warning = [line for line in peer.server.log_path.read_text().splitlines() if "were dropped" in line]
    entries, responses, har_dropped = count_records(har, events)
    report_dropped = json.loads(report.read_text()).get("droppedEvents")
    warmup = 16  # bench.warm_up's requests, recorded too
    run.check("records: nothing dropped", not warning and har_dropped is None and report_dropped is None and status == 0,
              f"exit {status}; HAR _droppedEvents {har_dropped}, report droppedEvents {report_dropped}; "
              f"{warning[0] if warning else 'no warning'}")
    run.check("records: one entry per request", entries == responses and entries >= total + warmup,
              f"{entries:,} HAR entries, {responses:,} response lines, {total + warmup:,} requests counted by the load "
              f"generator (with the warm-up's {warmup}); HAR {har.stat().st_size / 2**20:,.0f} MiB, events "
              f"{events.stat().st_size / 2**20:,.0f} MiB")


def build_loadgen(path: Path) -> None:
    source = HERE / "loadgen.c"
    if path.exists() and path.stat().st_mtime >= source.stat().st_mtime:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(path), str(source), "-lssl", "-lcrypto", "-lnghttp2"], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=str(ROOT / ".build" / "release" / "mitm-proxy"))
    parser.add_argument("--loadgen", default=str(ROOT / ".build" / "bench-loadgen"))
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    parser.add_argument("--phases", default="concurrent,soak,signals,records")
    parser.add_argument("--concurrent", type=int, default=10000, help="connections held at once (10,000)")
    parser.add_argument("--opening", type=int, default=200, help="connections being opened at a time (200)")
    parser.add_argument("--requests", type=int, default=1_000_000, help="requests in the soak (1,000,000)")
    parser.add_argument("--round-seconds", type=float, default=10.0)
    parser.add_argument("--rss-tolerance", type=float, default=0.10, help="RSS growth allowed after warm-up (0.10)")
    parser.add_argument("--record", action="store_true", help="soak with --har and --events too (large files)")
    parser.add_argument("--records-requests", type=int, default=500_000, help="requests of the records phase (500,000)")
    parser.add_argument("--signal-after", type=float, default=3.0, help="seconds of load before the signal")
    parser.add_argument("--load-timeout", type=float, default=900.0, help="longest one load generator run may take")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, HAR, report, events)")
    args = parser.parse_args()
    phases = [p for p in args.phases.split(",") if p]
    unknown = set(phases) - {"concurrent", "soak", "signals", "records"}
    if unknown:
        print(f"soak: unknown phase(s) {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if not os.access(args.binary, os.X_OK):
        print(f"soak: no mitm-proxy at {args.binary}: build it with `scripts/build-release`",
              file=sys.stderr)
        return 2
    build_loadgen(Path(args.loadgen))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # inherited by the proxy, nginx and the load generator
    log(f"open-files limit {soft} -> {hard}; load average {bench.load_average()}")

    work = Path(tempfile.mkdtemp(prefix="mitm-proxy-soak-"))
    os.chmod(work, 0o755)
    processes = bench.Processes()
    def interrupted(number, frame):  # noqa: ARG001
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    try:
        run = Run(args, work, processes)
        for phase in phases:
            started = time.monotonic()
            {"concurrent": phase_concurrent, "soak": phase_soak, "signals": phase_signals,
             "records": phase_records}[phase](run)
            log(f"{phase} took {time.monotonic() - started:.0f} s")
    except bench.BenchError as error:
        log(f"error: {error}")
        return 2
    except KeyboardInterrupt:
        log("interrupted; stopping every process this run started")
        return 130
    finally:
        processes.stop_all()
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    failed = [name for name, held, _ in run.checks if not held]
    log(f"{len(run.checks) - len(failed)} passed, {len(failed)} failed" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
