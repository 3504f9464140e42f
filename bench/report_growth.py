#!/usr/bin/env python3
"""How the proxy's account grows with a long session (issue 20, item 9).

Runs a mitm-proxy binary with --report, pushes short intercepted connections through it in batches
(bench-loadgen --mode newconn: one request per new TCP+TLS connection, 50 at a time), and after each
batch prints the connections decided so far, the report's size, the proxy's resident memory and its
CPU per 2,000 connections in that batch. Compare two binaries (before/after) with the same arguments.

    bench/report_growth.py --binary .build/release/mitm-proxy [--connections 12000]

Everything listens on 127.0.0.1 on kernel-chosen ports; every process it starts is stopped by its pid.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def read_port(process, pattern, what):
    deadline = time.time() + 20
    text = ""
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        text += line
        found = re.search(pattern, line)
        if found:
            return int(found.group(1))
    raise SystemExit(f"{what} did not print its port: {text!r}")


def decided(report_path):
    report = json.loads(Path(report_path).read_text())
    return sum(host["attempts"] for host in report["hosts"]), report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--connections", type=int, default=12000)
    parser.add_argument("--batch-seconds", type=float, default=3.0)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="mitm-report-growth-"))
    processes = []
    try:
        subprocess.run(["bash", str(ROOT / "certs/make-test-pki.sh"), str(work / "pki")], check=True, capture_output=True)
        loadgen = work / "bench-loadgen"
        subprocess.run(["gcc", "-O2", "-o", str(loadgen), str(ROOT / "bench/loadgen.c"), "-lssl", "-lcrypto"], check=True)
        origin = subprocess.Popen(
            ["python3", str(ROOT / "Tests/MITMProxyTests/Fixtures/origin.py"), "--cert", str(work / "pki/origin-chain.pem"),
             "--key", str(work / "pki/origin-key.pem")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        processes.append(origin)
        origin_port = read_port(origin, r"PORT (\d+)", "origin")
        report = work / "report.json"
        proxy = subprocess.Popen(
            [args.binary, "--port", "0", "--ca-dir", str(work / "ca"), "--upstream-ca", str(work / "pki/root.pem"),
             "--resolve", "origin.test:127.0.0.1", "--report", str(report), "-q"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        processes.append(proxy)
        proxy_port = read_port(proxy, r"listening on 127\.0\.0\.1:(\d+) ", "mitm-proxy")
        subprocess.Popen(["cat"], stdin=proxy.stdout, stdout=subprocess.DEVNULL)

        print(f"{'decided':>8} {'report KB':>10} {'RSS MB':>8} {'CPU s per 2,000 conns':>22}")
        total = 0
        while total < args.connections:
            before_cpu = cpu_seconds(proxy.pid)
            before_total = total
            subprocess.run([str(loadgen), "--mode", "newconn", "--connect", f"127.0.0.1:{proxy_port}",
                            "--proxy", f"origin.test:{origin_port}", "--host", "origin.test", "--path", "/hello",
                            "--concurrency", "50", "--duration", str(args.batch_seconds), "--timeout", "30"],
                           check=True, capture_output=True)
            time.sleep(1.5)  # a measurement pause, not synchronisation: lets the coalesced report rewrite land
            total, _ = decided(report)
            spent = cpu_seconds(proxy.pid) - before_cpu
            per = spent / (total - before_total) * 2000 if total > before_total else 0
            print(f"{total:>8} {report.stat().st_size / 1024:>10,.0f} {rss_kb(proxy.pid) / 1024:>8,.1f} {per:>22.2f}", flush=True)
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    sys.exit(main())
