#!/usr/bin/env python3
"""Repeatable load runs against the mitm-proxy binary (issue 20): crashes, lost requests, altered bytes.

    python3 bench/stress.py --runs 10 --load transfers|connections|all
    python3 bench/stress.py --load connections --count 12000 --batch 2000    # report size and CPU per batch
    python3 bench/stress.py --load h2-streams --streams 4000 [--no-har]      # peak RSS per concurrent h2 stream

Every run starts a fresh proxy (`--port 0 --ca-dir TMP --har FILE --report FILE --upstream-ca <test root>`,
127.0.0.1 only), puts one load through it, checks that the proxy is still alive, stops it with SIGINT, and
requires exit status 0, no "Fatal error" on its stderr, a HAR that is JSON (and HAR 1.2 when jsonschema is
importable) with the expected number of entries, and a report that is JSON with "final": true. One line per
run, then "N passed, N failed"; exit status 1 when a run failed, 2 when the setup failed.

Loads:
  transfers    25 GETs of 100 MiB and 10 POSTs of 50 MiB (HTTP/1.1 over TLS), and 3 HTTP/2 connections of
               5 streams of 20 MiB each, all at once; every client reads or writes at --rate MiB/s, so the
               transfers overlap for several seconds. Every body is checked (length and SHA-256).
  connections  --count short intercepted connections (CONNECT, TLS, one GET /hello, close), --concurrency at a
               time, in batches of --batch: after each batch the proxy's CPU, RSS and report size.
  h2-streams   --streams concurrent HTTP/2 streams (100 per connection) each asking for a large body that the
               client never acknowledges; once the proxy's RSS stops growing: peak RSS per stream.
  all          transfers, then connections, --runs times each.

Origins are the test fixtures (Tests/MITMProxyTests/Fixtures/origin.py, h2_origin.py) with the test PKI
(certs/make-test-pki.sh). Needs python3 and the `h2` package; the release binary
(`scripts/build-release`, or --binary PATH).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "Tests" / "MITMProxyTests" / "Fixtures"
ORIGIN_NAME = "origin.test"  # in the test PKI's origin certificate; sent to 127.0.0.1 with --resolve
MIB = 1024 * 1024
PATTERN = bytes(range(251))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SOCKET_TIMEOUT = 60  # seconds any single socket operation may wait


class SetupError(Exception):
    pass


def pattern(offset: int, count: int) -> bytes:
    """The origins' body bytes: byte i of a body is i % 251."""
    start = offset % len(PATTERN)
    return (PATTERN * ((start + count) // len(PATTERN) + 1))[start:start + count]


_digests: dict[int, str] = {}
_digests_lock = threading.Lock()


def pattern_sha256(count: int) -> str:
    with _digests_lock:
        if count not in _digests:
            digest = hashlib.sha256()
            block = pattern(0, 251 * 4096)
            whole, rest = divmod(count, len(block))
            for _ in range(whole):
                digest.update(block)
            digest.update(block[:rest])
            _digests[count] = digest.hexdigest()
        return _digests[count]


class Pacer:
    """Sleeps so that `done` bytes take at least done / rate seconds (rate in bytes/s; 0 = no cap)."""

    def __init__(self, rate: float):
        self.rate = rate
        self.start = time.monotonic()

    def pace(self, done: int) -> None:
        if self.rate > 0:
            ahead = self.start + done / self.rate - time.monotonic()
            if ahead > 0:
                time.sleep(min(ahead, 1.0))


# ---------------------------------------------------------------------------------------------- processes

class LineReader:
    """Reads a child's stdout line by line with a deadline (select on the pipe), keeping what is left over."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.buffer = b""
        self.lines: list[str] = []

    def until(self, prefix: str, timeout: float) -> str | None:
        """The first line (from now on) that starts with `prefix`, or None at end of output or timeout."""
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                text = line.decode("utf-8", "replace")
                self.lines.append(text)
                if text.startswith(prefix):
                    return text
            if time.monotonic() >= deadline:
                return None
            ready, _, _ = select.select([fd], [], [], max(0.0, min(0.5, deadline - time.monotonic())))
            if not ready:
                if self.process.poll() is not None:
                    return None
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk


def drain(stream, sink) -> None:
    """Copies a child's pipe into `sink` (a file) until it closes, so the child never blocks on it."""
    def run() -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            sink.write(chunk)
            sink.flush()
    threading.Thread(target=run, daemon=True).start()


class Origin:
    """One of the test fixtures' origins on port 0; exits when its stdin closes."""

    def __init__(self, script: str, pki: Path, work: Path, extra: list[str]):
        self.log_path = work / (script + ".log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, str(FIXTURES / script), "--host", "127.0.0.1",
             "--cert", str(pki / "origin-chain.pem"), "--key", str(pki / "origin-key.pem")] + extra,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        line = LineReader(self.process).until("PORT ", 20)
        if line is None:
            self.stop()
            raise SetupError(f"{script} did not print its port: {self.log_path.read_text(errors='replace')[-400:]}")
        self.port = int(line.split()[1])
        drain(self.process.stdout, self.log)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def proc_status_kib(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def proc_cpu_seconds(pid: int) -> float | None:
    """utime + stime of the process (all threads), from /proc/PID/stat."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Proxy:
    """The mitm-proxy binary under test, on 127.0.0.1 port 0, with its own CA, HAR and report."""

    def __init__(self, binary: str, pki: Path, run_dir: Path, har: bool):
        run_dir.mkdir(parents=True, exist_ok=True)
        self.har_path = run_dir / "har.json" if har else None
        self.report_path = run_dir / "report.json"
        self.stderr_path = run_dir / "stderr.log"
        self.stdout_path = run_dir / "stdout.log"
        arguments = [binary, "--port", "0", "--host", "127.0.0.1", "--ca-dir", str(run_dir / "ca"),
                     "--upstream-ca", str(pki / "root.pem"), "--resolve", f"{ORIGIN_NAME}:127.0.0.1",
                     "--report", str(self.report_path), "-q"]
        if self.har_path:
            arguments += ["--har", str(self.har_path)]
        self.stderr = open(self.stderr_path, "wb")
        self.stdout = open(self.stdout_path, "wb")
        self.process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=self.stderr)
        self.pid = self.process.pid
        reader = LineReader(self.process)
        listening = reader.until("mitm-proxy listening on ", 30)
        ca_line = listening and reader.until("CA certificate: ", 10)
        lines = reader.lines
        self.stdout.write(("\n".join(lines) + "\n").encode() + reader.buffer)
        if not listening or not ca_line:
            self.kill()
            raise SetupError(f"mitm-proxy did not start: {self.stderr_tail()} {' | '.join(lines)[-300:]}")
        self.port = int(listening.split()[3].rsplit(":", 1)[1])
        self.ca_path = ca_line[len("CA certificate: "):].rsplit(" (", 1)[0]
        drain(self.process.stdout, self.stdout)
        context = ssl.create_default_context(cafile=self.ca_path)
        self.context = context
        h2_context = ssl.create_default_context(cafile=self.ca_path)
        h2_context.set_alpn_protocols(["h2"])
        self.h2_context = h2_context

    def stderr_tail(self, limit: int = 2000) -> str:
        self.stderr.flush()
        return self.stderr_path.read_text(errors="replace")[-limit:].strip()

    def alive(self) -> bool:
        return self.process.poll() is None

    def cpu_seconds(self) -> float | None:
        return proc_cpu_seconds(self.pid)

    def kib(self, field: str) -> int | None:
        return proc_status_kib(self.pid, field)

    def stop(self, timeout: float) -> int | None:
        """SIGINT, then up to `timeout` seconds for the exit; None when it had to be killed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        return self.process.returncode

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


# ---------------------------------------------------------------------------------------------- clients

def tunnel(proxy: Proxy, port: int, context: ssl.SSLContext) -> ssl.SSLSocket:
    """CONNECT origin.test:PORT through the proxy, then TLS trusting the proxy's CA."""
    raw = socket.create_connection(("127.0.0.1", proxy.port), timeout=SOCKET_TIMEOUT)
    try:
        target = f"{ORIGIN_NAME}:{port}".encode()
        raw.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target))
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = raw.recv(4096)
            if not chunk:
                raise RuntimeError("proxy closed the CONNECT")
            answer += chunk
            if len(answer) > 16384:
                raise RuntimeError("CONNECT answer too long")
        if not answer.startswith(b"HTTP/1.1 200"):
            raise RuntimeError("CONNECT answered %r" % answer.split(b"\r\n", 1)[0])
        if not answer.endswith(b"\r\n\r\n"):
            raise RuntimeError("bytes after the CONNECT answer")
        return context.wrap_socket(raw, server_hostname=ORIGIN_NAME)
    except BaseException:
        raw.close()
        raise


class Response:
    """Reads one HTTP/1.1 response head from a socket, keeping what came after it."""

    def __init__(self, sock: socket.socket):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed before the response head (%d bytes)" % len(data))
            data += chunk
            if len(data) > 65536:
                raise RuntimeError("response head too long")
        head, self.rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ", 2)[1])
        self.headers = {}
        for line in lines[1:]:
            name, value = line.split(":", 1)
            self.headers[name.strip().lower()] = value.strip()

    def body(self, sock: socket.socket, pacer: Pacer | None = None, digest=None) -> int:
        """Reads a Content-Length body into `digest` (or keeps it); returns its length."""
        length = int(self.headers["content-length"])
        got = len(self.rest)
        if digest is not None:
            digest.update(self.rest)
        while got < length:
            chunk = sock.recv(min(65536, length - got))
            if not chunk:
                raise RuntimeError("body ended at %d of %d bytes" % (got, length))
            got += len(chunk)
            if digest is not None:
                digest.update(chunk)
            else:
                self.rest += chunk
            if pacer:
                pacer.pace(got)
        return got


def slow_get(proxy: Proxy, port: int, size: int, rate: float) -> None:
    with tunnel(proxy, port, proxy.context) as sock:
        sock.sendall(b"GET /bytes/%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (size, ORIGIN_NAME.encode(), port))
        response = Response(sock)
        if response.status != 200:
            raise RuntimeError("GET /bytes answered %d" % response.status)
        digest = hashlib.sha256()
        got = response.body(sock, Pacer(rate), digest)
        if got != size or digest.hexdigest() != pattern_sha256(size):
            raise RuntimeError("GET /bytes/%d: %d bytes, body altered" % (size, got))


def slow_post(proxy: Proxy, port: int, size: int, rate: float) -> None:
    with tunnel(proxy, port, proxy.context) as sock:
        sock.sendall(b"POST /digest HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/octet-stream\r\n"
                     b"Content-Length: %d\r\n\r\n" % (ORIGIN_NAME.encode(), port, size))
        pacer = Pacer(rate)
        sent = 0
        piece_size = 64 * 1024
        block = pattern(0, 251 * 1024)  # whole periods, so a piece at a period boundary starts at byte 0
        while sent < size:
            count = min(piece_size, size - sent)
            start = sent % 251
            sock.sendall(block[start:start + count])
            sent += count
            pacer.pace(sent)
        response = Response(sock)
        response.body(sock)
        answer = json.loads(response.rest)
        if response.status != 200 or answer.get("length") != size or answer.get("sha256") != pattern_sha256(size):
            raise RuntimeError("POST /digest of %d bytes: origin saw %r" % (size, answer))


def h2_connection(proxy: Proxy, port: int, window: int = 0):
    """An HTTP/2 connection through the proxy; `window` > 0 raises the client's stream and connection
    receive windows to that many bytes (browsers do: 64 KiB windows make a loopback transfer round-trip bound)."""
    import h2.config
    import h2.connection
    import h2.settings
    sock = tunnel(proxy, port, proxy.h2_context)
    if sock.selected_alpn_protocol() != "h2":
        sock.close()
        raise RuntimeError("ALPN gave %r, not h2" % sock.selected_alpn_protocol())
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    if window > 65535:
        conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
        conn.increment_flow_control_window(window - 65535)
    sock.sendall(conn.data_to_send())
    return sock, conn


def h2_get_many(conn, port: int, paths: list[str]) -> list[int]:
    ids = []
    for path in paths:
        stream_id = conn.get_next_available_stream_id()
        conn.send_headers(stream_id, [(":method", "GET"), (":scheme", "https"),
                                      (":authority", f"{ORIGIN_NAME}:{port}"), (":path", path)], end_stream=True)
        ids.append(stream_id)
    return ids


def slow_h2(proxy: Proxy, port: int, streams: int, size: int, rate: float) -> None:
    """One HTTP/2 connection, `streams` GETs of `size` bytes at once, all read at `rate` in total."""
    import h2.events
    sock, conn = h2_connection(proxy, port, window=4 * MIB)
    with sock:
        ids = h2_get_many(conn, port, ["/bytes/%d" % size] * streams)
        sock.sendall(conn.data_to_send())
        state = {stream_id: {"status": None, "digest": hashlib.sha256(), "length": 0, "ended": False}
                 for stream_id in ids}
        pacer = Pacer(rate)
        total = 0
        while not all(s["ended"] for s in state.values()):
            data = sock.recv(65536)
            if not data:
                raise RuntimeError("h2 connection closed with streams open")
            total += len(data)
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    state[event.stream_id]["status"] = int(dict(event.headers)[":status"])
                elif isinstance(event, h2.events.DataReceived):
                    s = state[event.stream_id]
                    s["digest"].update(event.data)
                    s["length"] += len(event.data)
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    state[event.stream_id]["ended"] = True
                elif isinstance(event, h2.events.StreamReset):
                    raise RuntimeError("h2 stream %d reset (%s)" % (event.stream_id, event.error_code))
                elif isinstance(event, h2.events.ConnectionTerminated):
                    raise RuntimeError("h2 GOAWAY (%s)" % event.error_code)
            pending = conn.data_to_send()
            if pending:
                sock.sendall(pending)
            pacer.pace(total)
        for stream_id, s in state.items():
            if s["status"] != 200 or s["length"] != size or s["digest"].hexdigest() != pattern_sha256(size):
                raise RuntimeError("h2 stream %d: status %s, %d bytes, body %s" % (
                    stream_id, s["status"], s["length"],
                    "intact" if s["digest"].hexdigest() == pattern_sha256(size) else "altered"))
        conn.close_connection()
        sock.sendall(conn.data_to_send())


def hello(proxy: Proxy, port: int) -> None:
    with tunnel(proxy, port, proxy.context) as sock:
        sock.sendall(b"GET /hello HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n" % (ORIGIN_NAME.encode(), port))
        response = Response(sock)
        response.body(sock)
        if response.status != 200 or response.rest != b"hello from origin":
            raise RuntimeError("GET /hello: %d %r" % (response.status, response.rest[:60]))


# ---------------------------------------------------------------------------------------------- loads

def run_all(jobs: list, deadline: float, workers: int | None = None) -> list[str]:
    """Runs the callables at once (or `workers` at a time); returns the errors, by message."""
    errors: list[str] = []
    with ThreadPoolExecutor(max_workers=workers or len(jobs)) as pool:
        futures = [pool.submit(job) for job in jobs]
        for future in futures:
            try:
                future.result(timeout=max(1.0, deadline - time.monotonic()))
            except Exception as error:  # noqa: BLE001 - every failure is counted and shown
                errors.append(f"{type(error).__name__}: {error}")
    return errors


def load_transfers(proxy: Proxy, origins: dict, args, figures: dict) -> tuple[list[str], int]:
    rate = args.rate * MIB
    port, h2_port = origins["http1"].port, origins["h2"].port
    jobs = [lambda: slow_get(proxy, port, args.get_size * MIB, rate) for _ in range(args.gets)]
    jobs += [lambda: slow_post(proxy, port, args.post_size * MIB, rate) for _ in range(args.posts)]
    jobs += [lambda: slow_h2(proxy, h2_port, args.h2_streams, args.h2_size * MIB, rate) for _ in range(args.h2_connections)]
    start = time.monotonic()
    errors = run_all(jobs, start + args.load_timeout)
    figures["load_seconds"] = round(time.monotonic() - start, 1)
    return errors, args.gets + args.posts + args.h2_connections * args.h2_streams


def load_connections(proxy: Proxy, origins: dict, args, figures: dict) -> tuple[list[str], int]:
    port = origins["http1"].port
    errors: list[str] = []
    batches = []
    start = time.monotonic()
    done = 0
    while done < args.count:
        size = min(args.batch, args.count - done)
        cpu_before = proxy.cpu_seconds() or 0.0
        batch_start = time.monotonic()
        errors += run_all([lambda: hello(proxy, port)] * size, batch_start + args.load_timeout, args.concurrency)
        done += size
        cpu_after = proxy.cpu_seconds() or 0.0
        report_size = proxy.report_path.stat().st_size if proxy.report_path.exists() else 0
        batches.append({"connections": done, "cpu_s": round(cpu_after - cpu_before, 2),
                        "wall_s": round(time.monotonic() - batch_start, 1), "report_bytes": report_size,
                        "rss_kib": proxy.kib("VmRSS")})
        if args.batch < args.count:
            b = batches[-1]
            print(f"    after {done:>6} connections: batch CPU {b['cpu_s']:.2f} s, wall {b['wall_s']:.1f} s, "
                  f"report {b['report_bytes'] / 1e6:.2f} MB, RSS {(b['rss_kib'] or 0) / 1024:.1f} MiB", flush=True)
        if not proxy.alive():
            break
    figures["load_seconds"] = round(time.monotonic() - start, 1)
    figures["batches"] = batches
    return errors, args.count


def load_h2_streams(proxy: Proxy, origins: dict, args, figures: dict) -> tuple[list[str], int]:
    """Opens --streams concurrent streams (100 per connection) of a large body that is never acknowledged."""
    import h2.events
    port = origins["h2"].port
    per_connection = 100
    connections = -(-args.streams // per_connection)
    rss_before = proxy.kib("VmRSS") or 0
    figures["rss_before_kib"] = rss_before
    stop = threading.Event()
    errors: list[str] = []
    heads = [0]
    lock = threading.Lock()
    sockets = []

    def hold(count: int) -> None:
        try:
            sock, conn = h2_connection(proxy, port)
        except Exception as error:  # noqa: BLE001
            with lock:
                errors.append(f"{type(error).__name__}: {error}")
            return
        with lock:
            sockets.append(sock)
        try:
            h2_get_many(conn, port, ["/bytes/%d" % (args.h2_body * MIB)] * count)
            sock.sendall(conn.data_to_send())
            sock.settimeout(1)
            while not stop.is_set():
                try:
                    data = sock.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    if not stop.is_set():
                        with lock:
                            errors.append("h2 connection closed while holding its streams")
                    return
                for event in conn.receive_data(data):  # read frames, never acknowledge DATA
                    if isinstance(event, h2.events.ResponseReceived):
                        with lock:
                            heads[0] += 1
                    elif isinstance(event, h2.events.StreamReset):
                        with lock:
                            errors.append("stream %d reset (%s)" % (event.stream_id, event.error_code))
                pending = conn.data_to_send()
                if pending:
                    sock.sendall(pending)
        except Exception as error:  # noqa: BLE001
            if not stop.is_set():
                with lock:
                    errors.append(f"{type(error).__name__}: {error}")
        finally:
            sock.close()

    threads = []
    remaining = args.streams
    for _ in range(connections):
        count = min(per_connection, remaining)
        remaining -= count
        thread = threading.Thread(target=hold, args=(count,), daemon=True)
        thread.start()
        threads.append(thread)
    # Wait for every response head, then until the flow has stopped: over the last 5 s the RSS grew by
    # less than 1% and the proxy used less than 0.1 s of CPU.
    start = time.monotonic()
    deadline = start + args.load_timeout
    samples: list[tuple[float, int, float]] = []
    while time.monotonic() < deadline and proxy.alive():
        time.sleep(0.5)
        now = time.monotonic()
        samples.append((now, proxy.kib("VmRSS") or 0, proxy.cpu_seconds() or 0.0))
        with lock:
            all_heads = heads[0] >= args.streams
        recent = [(rss, cpu) for t, rss, cpu in samples if t >= now - 5]
        if all_heads and now - start > 6 and len(recent) >= 8:
            rss_values = [rss for rss, _ in recent]
            if max(rss_values) <= min(rss_values) * 1.01 and recent[-1][1] - recent[0][1] < 0.1:
                break
    figures["load_seconds"] = round(time.monotonic() - start, 1)
    figures["streams_answered"] = heads[0]
    figures["hold_seconds"] = round(time.monotonic() - start, 1)
    peak = proxy.kib("VmHWM") or 0
    figures["h2_peak_kib"] = peak
    figures["h2_kib_per_stream"] = round(peak / max(1, args.streams), 1)
    figures["h2_growth_kib_per_stream"] = round((peak - rss_before) / max(1, args.streams), 1)
    if heads[0] < args.streams:
        errors.append(f"only {heads[0]} of {args.streams} streams got a response head")
    stop.set()
    with lock:
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    for thread in threads:
        thread.join(timeout=10)
    time.sleep(1)
    return errors, args.streams


LOADS = {"transfers": load_transfers, "connections": load_connections, "h2-streams": load_h2_streams}


# ---------------------------------------------------------------------------------------------- checks

def check_har(path: Path, expected: int, exact: bool) -> tuple[list[str], int | None]:
    problems = []
    try:
        har = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        return [f"HAR is not JSON: {error}"], None
    try:
        import jsonschema
        schema = json.loads((FIXTURES / "har-1.2.schema.json").read_text())
        jsonschema.Draft7Validator(schema).validate(har)
    except ImportError:
        pass
    except Exception as error:  # noqa: BLE001 - jsonschema.ValidationError and friends
        problems.append(f"HAR fails the HAR 1.2 schema: {str(error).splitlines()[0][:200]}")
    entries = len(har.get("log", {}).get("entries", []))
    if (entries != expected) if exact else (entries < expected):
        problems.append(f"HAR has {entries} entries, expected {expected}")
    return problems, entries


def check_report(path: Path) -> list[str]:
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        return [f"report is not JSON: {error}"]
    problems = []
    if report.get("final") is not True:
        problems.append('report is not "final": true')
    verdicts = {host.get("host"): host.get("verdict") for host in report.get("hosts", [])}
    if verdicts.get(ORIGIN_NAME) != "intercepted":
        problems.append(f"report: {ORIGIN_NAME} is {verdicts.get(ORIGIN_NAME)!r}, not intercepted")
    return problems


def fatal_lines(text: str) -> list[str]:
    """What the Swift runtime says when it traps: the message, and the first frame of the crashed thread."""
    keys = ("Fatal error", "fatal error", "Swift runtime failure", "Illegal instruction", "Segmentation fault",
            "Signal ", "Trace/breakpoint")
    lines = text.splitlines()
    found = [line.strip(" *") for line in lines if any(key in line for key in keys)]
    for index, line in enumerate(lines):
        if line.rstrip().endswith("crashed:"):
            frames = [frame.strip() for frame in lines[index + 1:index + 12] if " at /" in frame]
            found += [line.strip()] + frames[:2]
            break
    return list(dict.fromkeys(found))


def one_run(name: str, number: int, args, binary: str, pki: Path, work: Path, origins: dict) -> dict:
    run_dir = work / f"{name}-{number}"
    with_har = not args.no_har
    figures: dict = {"load": name, "run": number}
    problems: list[str] = []
    for key, origin in origins.items():
        if not origin.alive():
            raise SetupError(f"the {key} origin died: {origin.log_path.read_text(errors='replace')[-400:]}")
    proxy = Proxy(binary, pki, run_dir, with_har)
    try:
        errors, expected = LOADS[name](proxy, origins, args, figures)
        if errors:
            counted: dict[str, int] = {}
            for error in errors:
                counted[error[:160]] = counted.get(error[:160], 0) + 1
            summary = "; ".join(f"{count}x {message}" for message, count in list(counted.items())[:4])
            problems.append(f"{len(errors)} client failures: {summary}")
        figures["client_failures"] = len(errors)
        alive = proxy.alive()
        figures["peak_rss_kib"] = proxy.kib("VmHWM")
        figures["cpu_s"] = proxy.cpu_seconds()
        if not alive:
            problems.append(f"proxy died during the load (status {proxy.process.returncode})")
        status = proxy.stop(args.stop_timeout)
        figures["exit"] = status
        if status is None:
            problems.append(f"proxy did not exit within {args.stop_timeout:.0f} s of SIGINT (killed)")
        elif status < 0:
            problems.append(f"proxy died of signal {-status} ({signal.Signals(-status).name})")
        elif status != 0:
            problems.append(f"proxy exited with status {status}")
        fatal = fatal_lines(proxy.stderr_tail(200_000))
        if fatal:
            problems.append("stderr: " + "\n      ".join(fatal[:6]))
        if status is not None:  # checked after a crash too: were the HAR and the report left usable?
            if with_har:
                har_problems, entries = check_har(proxy.har_path, expected, exact=name != "h2-streams")
                figures["har_entries"] = entries
                figures["har_bytes"] = proxy.har_path.stat().st_size if proxy.har_path.exists() else None
                problems += har_problems
            problems += check_report(proxy.report_path)
        figures["report_bytes"] = proxy.report_path.stat().st_size if proxy.report_path.exists() else None
    finally:
        proxy.kill()
        proxy.stderr.close()
        proxy.stdout.close()
    figures["problems"] = problems
    figures["passed"] = not problems
    if figures["passed"] and not args.keep:
        shutil.rmtree(run_dir, ignore_errors=True)
    else:
        figures["kept"] = str(run_dir)
    return figures


def describe(figures: dict) -> str:
    parts = [f"{figures['load']} run {figures['run']}: {'PASS' if figures['passed'] else 'FAIL'}",
             f"load {figures.get('load_seconds', '?')} s"]
    if figures.get("peak_rss_kib"):
        parts.append(f"peak RSS {figures['peak_rss_kib'] / 1024:.1f} MiB")
    if figures.get("cpu_s") is not None:
        parts.append(f"proxy CPU {figures['cpu_s']:.2f} s")
    if figures.get("har_entries") is not None:
        parts.append(f"HAR {figures['har_entries']} entries")
    if figures["load"] == "connections" and figures.get("report_bytes") is not None:
        parts.append(f"report {figures['report_bytes'] / 1e6:.2f} MB")
    if figures["load"] == "h2-streams":
        parts.append(f"{figures.get('streams_answered')} streams held {figures.get('hold_seconds')} s; "
                     f"RSS before {figures.get('rss_before_kib', 0) / 1024:.1f} MiB; "
                     f"{figures.get('h2_kib_per_stream')} KiB peak RSS per stream "
                     f"({figures.get('h2_growth_kib_per_stream')} KiB over the RSS before)")
    parts.append(f"exit {figures.get('exit')}")
    line = ", ".join(parts)
    if figures["problems"]:
        line += "\n    " + "\n    ".join(figures["problems"])
        if figures.get("kept"):
            line += f"\n    kept: {figures['kept']}"
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", default="all", choices=["transfers", "connections", "all", "h2-streams"])
    parser.add_argument("--runs", type=int, default=1, help="runs of each load (default 1)")
    parser.add_argument("--binary", default=str(ROOT / ".build/release/mitm-proxy"))
    parser.add_argument("--no-har", action="store_true", help="run the proxy without --har")
    parser.add_argument("--keep", action="store_true", help="keep every run's folder (failed runs are always kept)")
    parser.add_argument("--json", help="write every run's figures to this file")
    group = parser.add_argument_group("transfers")
    group.add_argument("--gets", type=int, default=25)
    group.add_argument("--get-size", type=int, default=100, help="MiB per GET (default 100)")
    group.add_argument("--posts", type=int, default=10)
    group.add_argument("--post-size", type=int, default=50, help="MiB per POST (default 50)")
    group.add_argument("--h2-connections", type=int, default=3)
    group.add_argument("--h2-streams", type=int, default=5, help="streams per HTTP/2 connection")
    group.add_argument("--h2-size", type=int, default=20, help="MiB per HTTP/2 stream (default 20)")
    group.add_argument("--rate", type=float, default=16, help="MiB/s each client reads or writes (default 16)")
    group = parser.add_argument_group("connections")
    group.add_argument("--count", type=int, default=2000)
    group.add_argument("--concurrency", type=int, default=50)
    group.add_argument("--batch", type=int, default=2000, help="connections between two samples of CPU and report size")
    group = parser.add_argument_group("h2-streams")
    group.add_argument("--streams", type=int, default=4000)
    group.add_argument("--h2-body", type=int, default=256, help="MiB asked for per stream (default 256)")
    group = parser.add_argument_group("time limits")
    group.add_argument("--load-timeout", type=float, default=900, help="seconds a load may take (default 900)")
    group.add_argument("--stop-timeout", type=float, default=60, help="seconds from SIGINT to exit (default 60)")
    args = parser.parse_args()

    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        print(f"stress: no executable at {binary} (scripts/build-release, or --binary PATH)",
              file=sys.stderr)
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536, hard))
    loads = ["transfers", "connections"] if args.load == "all" else [args.load]
    work = Path(tempfile.mkdtemp(prefix="mitm-proxy-stress-"))
    origins: dict = {}
    results: list[dict] = []
    try:
        pki = work / "pki"
        made = subprocess.run(["bash", str(ROOT / "certs" / "make-test-pki.sh"), str(pki)],
                              capture_output=True, text=True, timeout=120)
        if made.returncode != 0:
            raise SetupError(f"make-test-pki.sh failed: {made.stderr.strip()[-400:]}")
        origins["http1"] = Origin("origin.py", pki, work, [])
        origins["h2"] = Origin("h2_origin.py", pki, work, ["--max-concurrent-streams", "1000"])
        print(f"stress: {binary}, loads {', '.join(loads)}, {args.runs} run(s) each, "
              f"{'no HAR' if args.no_har else 'with --har'}; work folder {work}", flush=True)
        for name in loads:
            for number in range(1, args.runs + 1):
                figures = one_run(name, number, args, binary, pki, work, origins)
                results.append(figures)
                print(describe(figures), flush=True)
    except SetupError as error:
        print(f"stress: setup failed: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stress: interrupted", file=sys.stderr)
        return 2
    finally:
        for origin in origins.values():
            origin.stop()
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))
        if not any(not r["passed"] for r in results) and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    passed = sum(1 for r in results if r["passed"])
    failed = len(results) - passed
    for name in loads:
        mine = [r for r in results if r["load"] == name]
        if not mine:
            continue
        rss = [r["peak_rss_kib"] / 1024 for r in mine if r.get("peak_rss_kib")]
        cpu = [r["cpu_s"] for r in mine if r.get("cpu_s") is not None]
        line = f"{name}: {sum(r['passed'] for r in mine)}/{len(mine)} passed"
        if rss:
            line += f", peak RSS {min(rss):.1f}-{max(rss):.1f} MiB"
        if cpu:
            line += f", proxy CPU {min(cpu):.2f}-{max(cpu):.2f} s"
        print(line)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
