#!/usr/bin/env python3
"""The driver of mitm-proxy's benchmark (see bench/README.md); started by scripts/bench.

Starts an HTTPS origin (nginx), the peers (direct, nginx as a TLS-terminating reverse proxy,
mitm-proxy, mitmproxy), runs bench-loadgen through each of them for every scenario, interleaved
(scenario by scenario, peers in a rotating order), repeats, and prints one table with medians,
spreads and ratios to nginx. Proxy CPU comes from /proc/PID/stat (utime+stime) deltas over the
load generator's measured window, memory from /proc/PID/status (VmRSS, VmHWM).

Standard library only. Everything listens on 127.0.0.1; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
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
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
ORIGIN_NAME = "origin.bench.test"
PEERS = ["direct", "nginx", "mitm-proxy", "mitmproxy"]
SCENARIOS = ["keepalive", "newconn", "first", "download", "idle", "h2-keepalive", "h2-download",
             "go-keepalive", "go-close", "go-h2"]
# HTTP/2 on both legs: the nginx peer is then nginx-h2 (reference-h2.conf.in), reported as nginx.
H2_SCENARIOS = ["h2-keepalive", "h2-download", "go-h2"]
# Run with bench/goload (Go's net/http, a client the project did not tune) instead of bench/loadgen.c.
GO_SCENARIOS = ["go-keepalive", "go-close", "go-h2"]
SCENARIO_TITLES = {
    "keepalive": "keep-alive 200 B, {c} concurrent",
    "h2-keepalive": "HTTP/2 keep-alive 200 B, {streams} streams on 1 connection",
    "h2-download": "HTTP/2 {size} download",
    "newconn": "new TLS connection per request, {c} concurrent",
    "download": "{size} download",
    "idle": "{n} idle intercepted connections",
    "first": "first contact with a new host name",
    "go-keepalive": "Go net/http keep-alive 200 B, {c} concurrent",
    "go-close": "Go net/http Connection: close per request (new TLS connection, no session cache), {c} concurrent",
    "go-h2": "Go net/http HTTP/2 200 B, {c} concurrent streams",
}


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


# ---------------------------------------------------------------- /proc readings


def process_cpu_ticks(pid: int) -> int:
    """utime + stime of a whole process (all its threads, live and exited), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5)


def process_status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def machine_busy_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, sum(values)


def load_average() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# ---------------------------------------------------------------- processes


@dataclass
class Server:
    """A started server: its main process, the processes whose CPU and memory count, its port."""

    name: str
    process: subprocess.Popen
    port: int
    pids: list[int] = field(default_factory=list)
    log_path: Path | None = None

    def cpu_us(self) -> float:
        total = 0
        for pid in self.pids:
            try:
                total += process_cpu_ticks(pid)
            except OSError:
                pass
        return total * 1e6 / CLK_TCK

    def rss_kb(self) -> int:
        return sum(self._status(pid, "VmRSS") for pid in self.pids)

    def anon_kb(self) -> int:
        """Anonymous (heap, stacks) resident memory: RSS without the shared libraries' file pages."""
        return sum(self._status(pid, "RssAnon") for pid in self.pids)

    def hwm_kb(self) -> int:
        return sum(self._status(pid, "VmHWM") for pid in self.pids)

    def reset_hwm(self) -> bool:
        ok = True
        for pid in self.pids:
            try:
                with open(f"/proc/{pid}/clear_refs", "w") as f:
                    f.write("5")
            except OSError:
                ok = False
        return ok

    @staticmethod
    def _status(pid: int, key: str) -> int:
        try:
            return process_status_kb(pid, key)
        except OSError:
            return 0

    def alive(self) -> bool:
        return self.process.poll() is None

    def serving_threads(self) -> int:
        """Threads that serve connections: mitm-proxy's event loops (named `mitm-loop-N`), else worker processes."""
        loops = 0
        for pid in self.pids:
            try:
                loops += sum(1 for task in Path(f"/proc/{pid}/task").iterdir()
                             if (task / "comm").read_text().startswith("mitm-loop-"))
            except OSError:
                pass
        return loops or max(1, len(self.pids) - 1)


class Processes:
    """Every process this run started, stopped by pid on exit."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen] = []

    def add(self, process: subprocess.Popen) -> subprocess.Popen:
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in reversed(self.started):
            if process.poll() is None:
                try:
                    process.send_signal(signal.SIGTERM)
                except OSError:
                    pass
        deadline = time.monotonic() + 5
        for process in reversed(self.started):
            remaining = max(0.1, deadline - time.monotonic())
            try:
                process.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def free_port() -> int:
    """A port the kernel says is free now (for nginx and mitmdump, which cannot report a port-0 bind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def fill_template(template: Path, values: dict[str, str]) -> str:
    text = template.read_text()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def start_nginx(name: str, template: Path, run: Path, values: dict[str, str], processes: Processes, nginx: str) -> Server:
    run.mkdir(parents=True, exist_ok=True)
    for sub in ["body", "proxy", "fastcgi", "uwsgi", "scgi"]:
        (run / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(run, 0o755)
    last_error = ""
    for attempt in range(5):
        port = free_port()
        config = run / "nginx.conf"
        config.write_text(fill_template(template, {**values, "PORT": str(port), "RUN": str(run)}))
        error_log = run / "error.log"
        if error_log.exists():
            error_log.unlink()
        process = processes.add(subprocess.Popen(
            [nginx, "-p", str(run), "-c", str(config), "-e", str(error_log)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(run / "stderr.log", "w")))
        if wait_for_port(port, process, 10):
            time.sleep(0.2)  # let every worker start
            server = Server(name, process, port, log_path=error_log)
            server.pids = [process.pid] + children_of(process.pid)
            return server
        if process.poll() is None:
            process.kill()
            process.wait()
        last_error = (error_log.read_text() if error_log.exists() else "") + (run / "stderr.log").read_text()
        if "Address already in use" not in last_error:
            break
        log(f"{name}: port {port} was taken meanwhile; retrying ({attempt + 1}/5)")
    raise BenchError(f"{name} (nginx) did not start: {last_error.strip()[-600:]}")


def start_mitm_proxy(binary: str, run: Path, pki: Path, names: list[str], processes: Processes,
                     wrapper: list[str] | None = None, extra: list[str] | None = None, web: bool = False) -> Server:
    """Starts mitm-proxy on port 0 and reads the port from its first line; `wrapper` runs it under a
    profiler (valgrind keeps the pid); `extra` are more options (--har, --report, ...). Without the web UI unless
    `web` (as shipped: its flow list is one more reader of the recording queue)."""
    run.mkdir(parents=True, exist_ok=True)
    arguments = (wrapper or []) + [binary, "--port", "0", "--ca-dir", str(run / "ca"), "--upstream-ca", str(pki / "ca.pem"),
                 "--idle-timeout", "600", "--handshake-timeout", "60", "-q"] + ([] if web else ["--no-web"]) + (extra or [])
    for name in names:
        arguments += ["--resolve", f"{name}:127.0.0.1"]
    log_path = run / "mitm-proxy.log"
    log_file = open(log_path, "w")
    process = processes.add(subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=log_file, text=True, bufsize=1))
    port = None
    deadline = time.monotonic() + (600 if wrapper else 60)
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        log_file.write(line)
        if line.startswith("mitm-proxy listening on "):
            port = int(line.split()[3].rsplit(":", 1)[1])
            break
    if port is None:
        log_file.flush()
        raise BenchError(f"mitm-proxy did not start: {log_path.read_text().strip()[-600:]}")

    def drain() -> None:  # keep its stdout flowing into the log
        for rest in process.stdout:  # type: ignore[union-attr]
            log_file.write(rest)
        log_file.flush()

    threading.Thread(target=drain, daemon=True).start()
    return Server("mitm-proxy", process, port, pids=[process.pid], log_path=log_path)


def start_mitmproxy(mitmdump: str, run: Path, pki: Path, processes: Processes) -> Server:
    run.mkdir(parents=True, exist_ok=True)
    last = ""
    for attempt in range(5):
        port = free_port()
        log_path = run / "mitmdump.log"
        arguments = [mitmdump, "--listen-host", "127.0.0.1", "--listen-port", str(port),
                     "--set", f"confdir={run / 'conf'}",
                     "--set", f"ssl_verify_upstream_trusted_ca={pki / 'ca.pem'}",
                     "--set", "connection_strategy=eager",
                     "-s", str(HERE / "mitmproxy_resolve.py"), "-q"]
        process = processes.add(subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=open(log_path, "w"),
                                                 stderr=subprocess.STDOUT))
        if wait_for_port(port, process, 60):
            return Server("mitmproxy", process, port, pids=[process.pid], log_path=log_path)
        if process.poll() is None:
            process.kill()
            process.wait()
        last = log_path.read_text()
        if "address already in use" not in last.lower():
            break
    raise BenchError(f"mitmproxy did not start: {last.strip()[-600:]}")


# ---------------------------------------------------------------- load generator runs


@dataclass
class Peer:
    name: str
    server: Server | None  # the proxy (None for direct)
    port: int  # where the load generator connects
    explicit: bool  # CONNECT first
    starter: object = None  # () -> Server, to restart the proxy

    def restart(self) -> None:
        """A fresh proxy process, so that memory figures do not inherit earlier scenarios' heap."""
        if self.server is None or self.starter is None:
            return
        process = self.server.process
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.server = self.starter()  # type: ignore[operator]
        self.port = self.server.port


class Runner:
    def __init__(self, loadgen: str, origin: Server, work: Path, timeout: float, goload: str = "") -> None:
        self.loadgen = loadgen
        self.goload = goload
        self.origin = origin
        self.work = work
        self.timeout = timeout
        self.runs = 0
        # Per peer, the serving threads seen at the end of its last measured window.
        self.serving_threads: dict[str, int] = {}

    def target_arguments(self, peer: Peer) -> list[str]:
        arguments = ["--connect", f"127.0.0.1:{peer.port}", "--host", ORIGIN_NAME]
        if peer.explicit:
            arguments += ["--proxy", f"{ORIGIN_NAME}:{self.origin.port}"]
        return arguments

    def run(self, peer: Peer, arguments: list[str], on_held=None, on_mark=None, program: str = "") -> dict:
        """Runs bench-loadgen (or `program`, which speaks its protocol); measures the proxy, the origin and the machine
        over START..END."""
        self.runs += 1
        stderr_path = self.work / f"loadgen-{self.runs}.err"
        command = [program or self.loadgen] + arguments
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=open(stderr_path, "w"), text=True, bufsize=1)
        timer = threading.Timer(self.timeout, process.kill)
        timer.start()
        result: dict = {}
        marks: dict = {}
        try:
            assert process.stdout is not None
            for line in process.stdout:
                line = line.strip()
                if line in ("START", "END"):
                    marks[line] = {
                        "proxy_cpu_us": peer.server.cpu_us() if peer.server else 0.0,
                        "origin_cpu_us": self.origin.cpu_us(),
                        "machine": machine_busy_ticks(),
                        "time": time.monotonic(),
                    }
                    if on_mark:
                        on_mark(line)
                elif line.startswith("HELD"):
                    if on_held:
                        on_held(result)
                    assert process.stdin is not None
                    process.stdin.close()
                elif line.startswith("RESULT "):
                    result.update(json.loads(line[7:]))
            process.wait()
        finally:
            timer.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
        if process.returncode != 0 or "requests" not in result:
            raise BenchError(f"load generator failed ({' '.join(command)}): {stderr_path.read_text().strip()[-800:]}")
        if result.get("errors"):
            log(f"{peer.name}: {result['errors']} errors in {arguments[1]} ({stderr_path.read_text().strip()[-300:]})")
        if "START" in marks and "END" in marks:
            start, end = marks["START"], marks["END"]
            result["proxy_cpu_us"] = end["proxy_cpu_us"] - start["proxy_cpu_us"]
            result["origin_cpu_us"] = end["origin_cpu_us"] - start["origin_cpu_us"]
            busy = end["machine"][0] - start["machine"][0]
            total = end["machine"][1] - start["machine"][1]
            wall = end["time"] - start["time"]
            cores = os.cpu_count() or 1
            ours = result["proxy_cpu_us"] + result["origin_cpu_us"] + result["loadgen_cpu_us"]
            busy_us = busy * 1e6 / CLK_TCK
            result["machine_busy"] = busy / total if total else 0.0
            result["others_cores"] = max(0.0, (busy_us - ours) / 1e6 / wall) if wall > 0 else 0.0
            result["cores"] = cores
            if peer.server:
                self.serving_threads[peer.name] = peer.server.serving_threads()
        return result


# ---------------------------------------------------------------- scenarios


@dataclass
class Settings:
    repetitions: int
    warmup: float
    duration: float
    keepalive_concurrency: int
    newconn_concurrency: int
    download_path: str
    download_mib: float
    downloads: int
    idle_connections: int
    first_names: int
    h2_streams: int = 32


def scenario_keepalive(runner: Runner, peer: Peer, s: Settings, rep: int) -> dict:
    r = runner.run(peer, ["--mode", "keepalive", *runner.target_arguments(peer), "--path", "/200b",
                          "--concurrency", str(s.keepalive_concurrency), "--warmup", str(s.warmup),
                          "--duration", str(s.duration)])
    return per_request(r, peer)


def scenario_newconn(runner: Runner, peer: Peer, s: Settings, rep: int) -> dict:
    r = runner.run(peer, ["--mode", "newconn", *runner.target_arguments(peer), "--path", "/200b",
                          "--concurrency", str(s.newconn_concurrency), "--warmup", str(s.warmup),
                          "--duration", str(s.duration)])
    figures = per_request(r, peer)
    figures["resumed_share"] = r["resumed"] / r["handshakes"] if r["handshakes"] else 0.0
    return figures


def scenario_h2_keepalive(runner: Runner, peer: Peer, s: Settings, rep: int) -> dict:
    r = runner.run(peer, ["--mode", "keepalive", *runner.target_arguments(peer), "--path", "/200b", "--concurrency", "1",
                          "--h2", str(s.h2_streams), "--warmup", str(s.warmup), "--duration", str(s.duration)])
    return per_request(r, peer)


def scenario_go(mode: str):
    def scenario(runner: Runner, peer: Peer, s: Settings, rep: int) -> dict:
        if not runner.goload:
            raise BenchError("bench/goload was not built (Go not installed?)")
        concurrency = s.newconn_concurrency if mode == "close" else s.keepalive_concurrency
        r = runner.run(peer, ["--mode", mode, *runner.target_arguments(peer), "--path", "/200b",
                              "--concurrency", str(concurrency), "--warmup", str(s.warmup), "--duration", str(s.duration)],
                       program=runner.goload)
        return per_request(r, peer)
    return scenario


def per_request(r: dict, peer: Peer) -> dict:
    requests = max(1, r["requests"])
    return {
        "rps": r["rps"],
        "p50_ms": r["p50_ms"],
        "p99_ms": r["p99_ms"],
        "max_ms": r.get("max_ms", 0.0),
        "over_500ms": r.get("over_500ms", 0),
        "proxy_cpu_us": r["proxy_cpu_us"] / requests if peer.server else None,
        "origin_cpu_us": r["origin_cpu_us"] / requests,
        "loadgen_cpu_us": r["loadgen_cpu_us"] / requests,
        "loadgen_core_share": r["loadgen_cpu_us"] / 1e6 / r["seconds"] if r["seconds"] else 0.0,
        "others_cores": r.get("others_cores", 0.0),
        "requests": r["requests"],
        "errors": r["errors"],
    }


def warm_up(runner: Runner, peer: Peer) -> None:
    """A few connections and requests on a fresh proxy: lazily built state (TLS contexts, thread
    pools, the forged leaf of the origin's name) is not part of what the next scenario measures."""
    runner.run(peer, ["--mode", "hold", *runner.target_arguments(peer), "--path", "/200b",
                      "--count", "16", "--concurrency", "16", "--duration", "5"])


def scenario_h2_download(runner: Runner, peer: Peer, s: Settings, rep: int) -> dict:
    return scenario_download(runner, peer, s, rep, extra=["--h2", "1"])


def scenario_download(runner: Runner, peer: Peer, s: Settings, rep: int, extra: list[str] | None = None) -> dict:
    peer.restart()
    warm_up(runner, peer)
    server = peer.server
    reset = server.reset_hwm() if server else False
    samples: list[int] = []
    anon_samples: list[int] = []
    stop = threading.Event()

    def sample() -> None:  # RssAnon has no high-water mark: sample it (and RSS, when VmHWM cannot be reset)
        while not stop.is_set() and server:
            samples.append(server.rss_kb())
            anon_samples.append(server.anon_kb())
            stop.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    rss_before = server.rss_kb() if server else 0
    sampler.start()
    try:
        r = runner.run(peer, ["--mode", "download", *runner.target_arguments(peer), "--path", s.download_path,
                              "--count", str(s.downloads), *(extra or [])])
    finally:
        stop.set()
        sampler.join()
    mib = r["bytes"] / 1048576.0
    peak = None
    if server:
        peak = server.hwm_kb() if reset else max(samples or [0])
    return {
        "mib_per_s": statistics.median(r["mib_per_s"]) if r["mib_per_s"] else 0.0,
        "proxy_cpu_us_per_mib": r["proxy_cpu_us"] / mib if server and mib else None,
        "origin_cpu_us_per_mib": r["origin_cpu_us"] / mib if mib else None,
        "loadgen_cpu_us_per_mib": r["loadgen_cpu_us"] / mib if mib else None,
        "peak_rss_kb": peak,
        "peak_anon_kb": max(anon_samples) if server and anon_samples else None,
        "rss_before_kb": rss_before if server else None,
        "hwm_reset": reset,
        "mib": mib,
        "errors": r["errors"],
    }


def scenario_idle(runner: Runner, peer: Peer, s: Settings, rep: int) -> dict:
    peer.restart()
    warm_up(runner, peer)
    server = peer.server
    assert server is not None
    time.sleep(0.5)
    before = server.rss_kb()
    measured: dict = {}

    def on_held(result: dict) -> None:
        time.sleep(1.0)  # let the proxy settle (idle-buffer release, late frees)
        measured["after"] = server.rss_kb()

    r = runner.run(peer, ["--mode", "hold", *runner.target_arguments(peer), "--path", "/200b",
                          "--count", str(s.idle_connections), "--concurrency", "16", "--duration", "60"],
                   on_held=on_held)
    held = max(1, r.get("held", 0))
    after = measured.get("after", before)
    return {
        "kb_per_conn": (after - before) / held,
        "rss_before_kb": before,
        "rss_held_kb": after,
        "held": r.get("held", 0),
        "errors": r["errors"],
    }


def scenario_first(runner: Runner, peer: Peer, s: Settings, rep: int) -> dict:
    arguments = ["--mode", "first", "--connect", f"127.0.0.1:{peer.port}", "--path", "/200b", "--gap-ms", "20",
                 "--count", str(s.first_names), "--names", f"r{rep}-n,.bench.test,{runner.origin.port}"]
    if peer.explicit:
        arguments += ["--proxy", "per-name"]
    r = runner.run(peer, arguments)
    first = statistics.median(r["first_us"]) / 1000 if r["first_us"] else 0.0
    repeat = statistics.median(r["repeat_us"]) / 1000 if r["repeat_us"] else 0.0
    return {"first_ms": first, "repeat_ms": repeat, "extra_ms": first - repeat, "errors": r["errors"]}


SCENARIO_FUNCTIONS = {
    "keepalive": scenario_keepalive,
    "newconn": scenario_newconn,
    "download": scenario_download,
    "idle": scenario_idle,
    "first": scenario_first,
    "h2-keepalive": scenario_h2_keepalive,
    "h2-download": scenario_h2_download,
    "go-keepalive": scenario_go("keepalive"),
    "go-close": scenario_go("close"),
    "go-h2": scenario_go("h2"),
}

# Which peers each scenario applies to: direct has no proxy to hold connections or forge for.
APPLIES = {
    "keepalive": PEERS,
    "newconn": PEERS,
    "download": PEERS,
    "idle": ["nginx", "mitm-proxy", "mitmproxy"],
    "first": ["nginx", "mitm-proxy", "mitmproxy"],
    "h2-keepalive": PEERS,
    "h2-download": PEERS,
    "go-keepalive": PEERS,
    "go-close": PEERS,
    "go-h2": PEERS,
}


# ---------------------------------------------------------------- table


HEADLINE = {
    # scenario: (key, unit, format)
    "keepalive": ("proxy_cpu_us", "µs CPU/req", "{:,.1f}"),
    "newconn": ("proxy_cpu_us", "µs CPU/req", "{:,.0f}"),
    "download": ("proxy_cpu_us_per_mib", "µs CPU/MiB", "{:,.0f}"),
    "idle": ("kb_per_conn", "KiB/conn", "{:,.1f}"),
    "first": ("extra_ms", "ms extra", "{:,.2f}"),
    "h2-keepalive": ("proxy_cpu_us", "µs CPU/req", "{:,.1f}"),
    "h2-download": ("proxy_cpu_us_per_mib", "µs CPU/MiB", "{:,.0f}"),
    "go-keepalive": ("proxy_cpu_us", "µs CPU/req", "{:,.1f}"),
    "go-close": ("proxy_cpu_us", "µs CPU/req", "{:,.0f}"),
    "go-h2": ("proxy_cpu_us", "µs CPU/req", "{:,.1f}"),
}


def values(results: list[dict], key: str) -> list[float]:
    return [r[key] for r in results if r.get(key) is not None]


def med(results: list[dict], key: str) -> float | None:
    v = values(results, key)
    return statistics.median(v) if v else None


def fmt_spread(results: list[dict], key: str, form: str) -> str:
    v = values(results, key)
    if not v:
        return "—"
    text = form.format(statistics.median(v))
    if len(v) > 1:
        text += f" ({form.format(min(v))}–{form.format(max(v))})"
    return text


def ratio(results: dict, scenario: str, peer: str, key: str) -> str:
    mine = med(results.get((scenario, peer), []), key)
    reference = med(results.get((scenario, "nginx"), []), key)
    if mine is None or reference is None or reference <= 0:
        return "—"
    return f"{mine / reference:.2f}×"


def details(scenario: str, runs: list[dict], results: dict, peer: str) -> str:
    if not runs:
        return ""
    text = details_text(scenario, runs, results, peer)
    errors = sum(r.get("errors", 0) for r in runs)
    if errors:
        text += f"; **{errors} failed requests or connections** (see the log)"
    return text


def details_text(scenario: str, runs: list[dict], results: dict, peer: str) -> str:
    if scenario in ("keepalive", "newconn", "h2-keepalive"):
        parts = [f"{fmt_spread(runs, 'rps', '{:,.0f}')} req/s",
                 f"p50 {fmt_spread(runs, 'p50_ms', '{:.2f}')} ms",
                 f"p99 {fmt_spread(runs, 'p99_ms', '{:.2f}')} ms",
                 f"origin {med(runs, 'origin_cpu_us'):,.1f} µs/req",
                 f"loadgen {med(runs, 'loadgen_cpu_us'):,.1f} µs/req ({med(runs, 'loadgen_core_share') * 100:.0f}% of a core)"]
        if scenario == "newconn":
            parts.append(f"client sessions resumed {med(runs, 'resumed_share') * 100:.0f}%")
        parts.append(f"slowest {max(run.get('max_ms', 0.0) for run in runs):,.0f} ms, "
                     f"{sum(run.get('over_500ms', 0) for run in runs)} of {sum(run['requests'] for run in runs):,} over 500 ms")
        return "; ".join(parts)
    if scenario in ("download", "h2-download"):
        parts = [f"{fmt_spread(runs, 'mib_per_s', '{:,.0f}')} MiB/s"]
        if med(runs, "peak_rss_kb") is not None:
            growth = [{"v": (r["peak_rss_kb"] - r["rss_before_kb"]) / 1024} for r in runs]
            parts.append(f"peak RSS {fmt_spread([{'v': r['peak_rss_kb'] / 1024} for r in runs], 'v', '{:,.1f}')} MiB "
                         f"({ratio(results, scenario, peer, 'peak_rss_kb')} nginx), {med(growth, 'v'):+,.1f} MiB over the RSS "
                         f"before the body, anonymous peak {med(runs, 'peak_anon_kb') / 1024:,.1f} MiB (sampled every 10 ms)")
        parts.append(f"origin {med(runs, 'origin_cpu_us_per_mib'):,.0f} µs/MiB")
        parts.append(f"loadgen {med(runs, 'loadgen_cpu_us_per_mib'):,.0f} µs/MiB")
        return "; ".join(parts)
    if scenario == "idle":
        return (f"RSS {med(runs, 'rss_before_kb') / 1024:,.1f} → {med(runs, 'rss_held_kb') / 1024:,.1f} MiB "
                f"holding {int(med(runs, 'held'))} connections")
    if scenario == "first":
        return (f"first request {fmt_spread(runs, 'first_ms', '{:.2f}')} ms, "
                f"repeat {fmt_spread(runs, 'repeat_ms', '{:.2f}')} ms")
    return ""


def render_table(results: dict, settings: Settings, peers: list[str], scenarios: list[str],
                 skipped: dict[str, str]) -> str:
    lines = ["| scenario | peer | headline: median (min–max) | × nginx | other figures (medians) |",
             "|---|---|---|---|---|"]
    for scenario in scenarios:
        title = SCENARIO_TITLES[scenario].format(
            c=settings.newconn_concurrency if scenario in ("newconn", "go-close") else settings.keepalive_concurrency,
            size=f"{settings.download_mib:g} MiB", n=f"{settings.idle_connections:,}", streams=settings.h2_streams)
        key, unit, form = HEADLINE[scenario]
        for peer in peers:
            if peer not in APPLIES[scenario]:
                continue
            runs = results.get((scenario, peer), [])
            if peer in skipped:
                lines.append(f"| {title} | {peer} | skipped | | {skipped[peer]} |")
                continue
            if not runs:
                lines.append(f"| {title} | {peer} | failed | | see the log above |")
                continue
            headline = fmt_spread(runs, key, form)
            if headline == "—" and peer == "direct":
                headline = "(no proxy)"
            elif headline != "—":
                headline += f" {unit}"
            shown_ratio = "" if peer == "direct" or scenario == "first" else ratio(results, scenario, peer, key)
            lines.append(f"| {title} | {peer} | {headline} | {shown_ratio} "
                         f"| {details(scenario, runs, results, peer)} |")
    return "\n".join(lines)


GOALS = [
    # (label, scenario, key, kind, limit): the targets of issue 40 (nginx-class on every path, with clients the project
    # did not write), and of issue 14 (peak RSS) and 11 (first contact)
    ("keep-alive CPU per request", "keepalive", "proxy_cpu_us", "ratio", 1.0),
    ("keep-alive CPU per request, Go client", "go-keepalive", "proxy_cpu_us", "ratio", 1.0),
    ("new-connection CPU per request", "newconn", "proxy_cpu_us", "ratio", 1.0),
    ("Connection: close CPU per request, Go client", "go-close", "proxy_cpu_us", "ratio", 1.0),
    ("CPU per MiB (download)", "download", "proxy_cpu_us_per_mib", "ratio", 0.9),
    ("HTTP/2 CPU per request", "h2-keepalive", "proxy_cpu_us", "ratio", 1.2),
    ("HTTP/2 CPU per request, Go client", "go-h2", "proxy_cpu_us", "ratio", 1.2),
    ("HTTP/2 CPU per MiB", "h2-download", "proxy_cpu_us_per_mib", "ratio", 1.1),
    ("memory per idle intercepted connection", "idle", "kb_per_conn", "ratio", 1.2),
    ("peak RSS during the download", "download", "peak_rss_kb", "absolute", 20 * 1024),
    ("first contact, extra over a repeat", "first", "extra_ms", "absolute", 0.1),
]


def paired_ratios(results: dict, scenario: str, key: str) -> list[float]:
    """mitm-proxy's figure over nginx's in each repetition: the two ran back to back, so a slow spell of the machine
    weighs on both. Empty unless every repetition of both has the figure."""
    mine = results.get((scenario, "mitm-proxy"), [])
    reference = results.get((scenario, "nginx"), [])
    if len(mine) != len(reference) or len(mine) < 3 or any(r.get(key) is None for r in mine + reference):
        return []
    return [m[key] / r[key] for m, r in zip(mine, reference) if r[key] > 0]


def render_goals(results: dict) -> str:
    lines = ["| goal for mitm-proxy | target | measured | met |", "|---|---|---|---|"]
    for label, scenario, key, kind, limit in GOALS:
        mine = med(results.get((scenario, "mitm-proxy"), []), key)
        if mine is None:
            lines.append(f"| {label} | | not measured | |")
            continue
        if kind == "ratio":
            reference = med(results.get((scenario, "nginx"), []), key)
            if not reference:
                lines.append(f"| {label} | ≤ {limit}× nginx | no nginx figure | |")
                continue
            value = mine / reference
            unit = HEADLINE[scenario][1]
            pairs = paired_ratios(results, scenario, key)
            per_repetition = (f"; per repetition {statistics.median(pairs):.2f}× ({min(pairs):.2f}–{max(pairs):.2f}×)"
                              if pairs else "")
            lines.append(f"| {label} | ≤ {limit:g}× nginx | {value:.2f}× ({mine:,.1f} vs {reference:,.1f} {unit}"
                         f"{per_repetition}) | {'yes' if value <= limit else 'NO'} |")
        else:
            if key == "peak_rss_kb":
                runs = results.get((scenario, "mitm-proxy"), [])
                anon = med(runs, "peak_anon_kb") or 0
                growth = statistics.median([(r["peak_rss_kb"] - r["rss_before_kb"]) for r in runs]) / 1024
                shown = f"{mine / 1024:,.1f} MiB ({growth:+,.1f} MiB during the body; anonymous peak {anon / 1024:,.1f} MiB)"
                target = f"≤ {limit / 1024:g} MiB"
                met = mine <= limit
            elif key == "kb_per_conn":
                shown, target = f"{mine:,.1f} KiB", f"≤ {limit:g} KiB"
                met = mine <= limit
            else:
                shown, target = f"{mine:+.2f} ms", f"≤ {limit:g} ms"
                met = mine <= limit
            lines.append(f"| {label} | {target} | {shown} | {'yes' if met else 'NO'} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def raise_open_files() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 65536
    wanted = min(wanted, 65536)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description="mitm-proxy benchmark driver (use scripts/bench)")
    parser.add_argument("--loadgen", required=True)
    parser.add_argument("--goload", default="", help="bench/goload built (the Go net/http client of the go-* scenarios)")
    parser.add_argument("--web", action="store_true", help="mitm-proxy with its web UI on, as shipped (default: --no-web)")
    parser.add_argument("--mitm-proxy", required=True, dest="mitm_proxy")
    parser.add_argument("--mitmdump", default="")
    parser.add_argument("--skip", action="append", default=[], help="PEER:REASON, a peer that cannot run")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--repetitions", type=int)
    parser.add_argument("--duration", type=float)
    parser.add_argument("--peers", default="")
    parser.add_argument("--scenarios", default="")
    parser.add_argument("--results", default="bench-results")
    parser.add_argument("--download-size", choices=["1m", "100m"], help="the file the download scenarios fetch "
                        "(default: 1m for --smoke, 100m otherwise)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, configs)")
    parser.add_argument("--note", action="append", default=[], help="a line for the report (build notes)")
    args = parser.parse_args()

    if args.smoke:
        settings = Settings(repetitions=1, warmup=0.3, duration=1.0, keepalive_concurrency=32, newconn_concurrency=16,
                            download_path="/1m", download_mib=1, downloads=3, idle_connections=100, first_names=3)
    else:
        settings = Settings(repetitions=3, warmup=1.0, duration=4.0, keepalive_concurrency=32, newconn_concurrency=16,
                            download_path="/100m", download_mib=100, downloads=3, idle_connections=1000, first_names=40)
    if args.download_size:
        settings.download_path = f"/{args.download_size}"
        settings.download_mib = 1 if args.download_size == "1m" else 100
    if args.repetitions:
        settings.repetitions = args.repetitions
    if args.duration:
        settings.duration = args.duration
    peers = [p for p in (args.peers.split(",") if args.peers else PEERS) if p]
    for p in peers:
        if p not in PEERS:
            raise BenchError(f"unknown peer {p}; peers are {', '.join(PEERS)}")
    if "nginx" not in peers:
        log("note: without the nginx peer there are no ratios")
    scenarios = [s for s in (args.scenarios.split(",") if args.scenarios else SCENARIOS) if s]
    for s in scenarios:
        if s not in SCENARIOS:
            raise BenchError(f"unknown scenario {s}; scenarios are {', '.join(SCENARIOS)}")
    skipped: dict[str, str] = {}
    for entry in args.skip:
        peer, _, reason = entry.partition(":")
        skipped[peer] = reason or "skipped"
    if "mitmproxy" in peers and "mitmproxy" not in skipped and not args.mitmdump:
        skipped["mitmproxy"] = "not installed"

    limit = raise_open_files()
    if limit < 4 * settings.idle_connections + 256:
        raise BenchError(f"the open-files limit is {limit}; the idle scenario needs about {4 * settings.idle_connections + 256}: "
                         f"raise it (ulimit -n) or run as root")

    started_at = datetime.datetime.now(datetime.timezone.utc)
    load_at_start = load_average()
    work = Path(tempfile.mkdtemp(prefix="mitm-proxy-bench-"))
    os.chmod(work, 0o755)
    processes = Processes()

    def on_signal(number, frame):  # noqa: ARG001
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    results: dict[tuple[str, str], list[dict]] = {}
    failures: list[str] = []
    runner: Runner | None = None
    try:
        log(f"working in {work}; load average {load_at_start}")
        pki = work / "pki"
        subprocess.run(["bash", str(HERE / "make-pki.sh"), str(pki)], check=True)
        www = work / "www"
        www.mkdir()
        (www / "200b").write_bytes(b"x" * 199 + b"\n")
        (www / "1m").write_bytes(os.urandom(1 << 20))
        with open(www / "100m", "wb") as f:  # incompressible, written once: the origin serves it from the page cache
            block = os.urandom(1 << 20)
            for _ in range(100):
                f.write(block)
        os.chmod(www, 0o755)
        for entry in www.iterdir():
            os.chmod(entry, 0o644)

        workers = str(os.cpu_count() or 2)
        origin = start_nginx("origin", HERE / "nginx" / "origin.conf.in", work / "origin",
                             {"WORKERS": workers, "PKI": str(pki), "WWW": str(www)}, processes, args.nginx)
        log(f"origin nginx on 127.0.0.1:{origin.port} (pids {origin.pids})")

        active: dict[str, Peer] = {}
        names = [ORIGIN_NAME] + [f"r{rep}-n{i}.bench.test" for rep in range(1, settings.repetitions + 1)
                                 for i in range(settings.first_names)]
        for peer in peers:
            if peer in skipped:
                continue
            try:
                if peer == "direct":
                    active[peer] = Peer(peer, None, origin.port, explicit=False)
                elif peer == "nginx":
                    def starter() -> Server:
                        return start_nginx("reference", HERE / "nginx" / "reference.conf.in", work / "reference",
                                           {"WORKERS": workers, "PKI": str(pki), "ORIGIN_PORT": str(origin.port)},
                                           processes, args.nginx)
                elif peer == "mitm-proxy":
                    def starter() -> Server:
                        return start_mitm_proxy(args.mitm_proxy, work / "mitm-proxy", pki, names, processes, web=args.web)
                elif peer == "mitmproxy":
                    def starter() -> Server:
                        return start_mitmproxy(args.mitmdump, work / "mitmproxy", pki, processes)
                if peer != "direct":
                    server = starter()
                    active[peer] = Peer(peer, server, server.port, explicit=peer != "nginx", starter=starter)
                if active[peer].server:
                    log(f"{peer} on 127.0.0.1:{active[peer].port} (pids {active[peer].server.pids})")
                if peer == "nginx" and any(s in H2_SCENARIOS for s in scenarios):
                    def h2_starter() -> Server:
                        return start_nginx("reference-h2", HERE / "nginx" / "reference-h2.conf.in", work / "reference-h2",
                                           {"WORKERS": workers, "PKI": str(pki), "ORIGIN_PORT": str(origin.port)},
                                           processes, args.nginx)
                    server = h2_starter()
                    active["nginx-h2"] = Peer("nginx", server, server.port, explicit=False, starter=h2_starter)
                    log(f"nginx (HTTP/2 reference) on 127.0.0.1:{server.port} (pids {server.pids})")
            except BenchError as error:
                skipped[peer] = str(error)
                log(f"{peer}: skipped: {error}")

        runner = Runner(args.loadgen, origin, work, timeout=600 if not args.smoke else 120, goload=args.goload)
        order = [p for p in peers if p in active]
        for rep in range(1, settings.repetitions + 1):
            rotation = order[(rep - 1) % len(order):] + order[: (rep - 1) % len(order)] if order else []
            for scenario in scenarios:
                for peer in rotation:
                    if peer not in APPLIES[scenario]:
                        continue
                    p = active["nginx-h2"] if peer == "nginx" and scenario in H2_SCENARIOS and "nginx-h2" in active else active[peer]
                    if p.server and not p.server.alive():
                        failures.append(f"{peer} exited (status {p.server.process.returncode}); see {p.server.log_path}")
                        del active[peer]
                        order.remove(peer)
                        continue
                    started = time.monotonic()
                    try:
                        figures = SCENARIO_FUNCTIONS[scenario](runner, p, settings, rep)
                    except BenchError as error:
                        failures.append(f"repetition {rep}, {scenario}, {peer}: {error}")
                        log(f"FAILED: repetition {rep}, {scenario}, {peer}: {error}")
                        continue
                    results.setdefault((scenario, peer), []).append(figures)
                    key = HEADLINE[scenario][0]
                    shown = figures.get(key)
                    log(f"rep {rep}/{settings.repetitions} {scenario:9} {peer:10} "
                        f"{HEADLINE[scenario][1]}={'—' if shown is None else f'{shown:,.2f}'} "
                        f"({time.monotonic() - started:.1f} s)")
    except KeyboardInterrupt:
        log("interrupted; stopping every process this run started")
        processes.stop_all()
        return 130
    finally:
        processes.stop_all()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"kept {work}")

    finished_at = datetime.datetime.now(datetime.timezone.utc)
    load_at_end = load_average()
    others = [r.get("others_cores") for runs in results.values() for r in runs if r.get("others_cores") is not None]
    header = [
        f"mitm-proxy benchmark, {started_at:%Y-%m-%d %H:%M} UTC, {'smoke run' if args.smoke else 'full run'}: "
        f"{settings.repetitions} repetition(s), peers interleaved; figures are medians (min–max over repetitions).",
        f"Machine: {os.cpu_count()} cores, load average {load_at_start} at start and {load_at_end} at the end; "
        f"other processes used a median of {statistics.median(others) if others else 0:.2f} cores during the measured windows.",
    ]
    if runner and runner.serving_threads:
        header.append("Serving threads: " + ", ".join(
            f"{name} {count} {'event loop(s)' if name == 'mitm-proxy' else 'worker(s)'}"
            for name, count in sorted(runner.serving_threads.items())) + " (each server's default on this machine).")
    header += [f"Note: {n}" for n in args.note]
    for peer, reason in skipped.items():
        if peer in peers:
            header.append(f"Note: {peer} skipped: {reason}")
    header += [f"Failure: {f}" for f in failures]
    table = render_table(results, settings, peers, scenarios, skipped)
    goals = render_goals(results) if "mitm-proxy" in peers and "mitm-proxy" in active else ""
    output = "\n".join(header) + "\n\n" + table + "\n"
    if goals:
        output += "\n" + goals + "\n"
    print(output)

    out_dir = Path(args.results) / f"{started_at:%Y%m%d-%H%M%S}{'-smoke' if args.smoke else ''}"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "table.md").write_text(output)
    (out_dir / "results.json").write_text(json.dumps({
        "started": started_at.isoformat(), "finished": finished_at.isoformat(),
        "load_average": [load_at_start, load_at_end], "settings": settings.__dict__, "skipped": skipped,
        "failures": failures, "notes": args.note,
        "results": {f"{s}/{p}": runs for (s, p), runs in results.items()},
    }, indent=2))
    log(f"results in {out_dir} ({(finished_at - started_at).total_seconds():.0f} s in all)")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as error:
        log(f"error: {error}")
        sys.exit(2)
