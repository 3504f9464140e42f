#!/usr/bin/env python3
"""Finds connections mitm-proxy stops reading (bench/README.md, finding 7).

    python3 bench/stalls.py [--seconds 25] [--mitm-proxy PATH]

Runs the new-connection scenario against mitm-proxy alone and samples `ss` every second: a proxy-side
socket whose receive queue stays non-empty for 3 samples or more holds bytes the client sent and the
proxy never read (75 bytes: the CONNECT request; ~600 bytes: a ClientHello). The listener's accept
queue is sampled too (a connection never accepted also shows its CONNECT unread). Prints those sockets and
the load generator's stalled connections; exit status 1 when any was found.
Build first with scripts/bench --smoke.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=25)
    parser.add_argument("--mitm-proxy", dest="mitm_proxy", default=None)
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    binary = args.mitm_proxy or str(root / ".build/release/mitm-proxy")
    loadgen = str(root / ".build/bench-loadgen")
    bench.raise_open_files()
    work = Path(tempfile.mkdtemp(prefix="mitm-proxy-stalls-"))
    work.chmod(0o755)
    processes = bench.Processes()
    try:
        pki = work / "pki"
        subprocess.run(["bash", str(bench.HERE / "make-pki.sh"), str(pki)], check=True)
        www = work / "www"
        www.mkdir()
        (www / "200b").write_bytes(b"x" * 199 + b"\n")
        www.chmod(0o755)
        (www / "200b").chmod(0o644)
        origin = bench.start_nginx("origin", bench.HERE / "nginx" / "origin.conf.in", work / "origin",
                                   {"WORKERS": "2", "PKI": str(pki), "WWW": str(www)}, processes,
                                   shutil.which("nginx") or "/usr/sbin/nginx")
        server = bench.start_mitm_proxy(binary, work / "mitm-proxy", pki, [bench.ORIGIN_NAME], processes)
        port = server.port
        load = subprocess.Popen([loadgen, "--mode", "newconn", "--connect", f"127.0.0.1:{port}",
                                 "--proxy", f"{bench.ORIGIN_NAME}:{origin.port}", "--host", bench.ORIGIN_NAME,
                                 "--path", "/200b", "--concurrency", "16", "--warmup", "0.5",
                                 "--duration", str(args.seconds), "--stall", str(args.seconds + 5)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        queued: dict[tuple[str, str], list[tuple[int, int]]] = {}
        backlog: list[int] = []
        for second in range(int(args.seconds) - 1):
            time.sleep(1)
            listening = subprocess.run(["ss", "-ltnH", f"( sport = :{port} )"], capture_output=True, text=True).stdout
            backlog.append(int(listening.split()[1]) if listening.strip() else 0)  # connections waiting for accept()
            listing = subprocess.run(["ss", "-tnH", "state", "established", f"( sport = :{port} )"],
                                     capture_output=True, text=True).stdout
            for line in listing.splitlines():
                fields = line.split()
                receive_queue, local, peer = int(fields[0]), fields[2], fields[3]
                if receive_queue:
                    queued.setdefault((local, peer), []).append((second, receive_queue))
        output, errors = load.communicate(timeout=args.seconds + 120)
        stuck = {key: samples for key, samples in queued.items() if len(samples) >= 3}
        for (local, peer), samples in stuck.items():
            print(f"proxy socket {local} <- client {peer}: {samples[0][1]} unread bytes for {len(samples)} s")
        print(output.strip().splitlines()[-1][:200] if output.strip() else "no result")
        print("\n".join(line for line in errors.splitlines() if "stalled" in line))
        print(f"connections waiting in the listener's accept queue, per second: {backlog}")
        print(f"{len(stuck)} proxy-side sockets with unread bytes for 3 s or more")
        return 1 if stuck else 0
    finally:
        processes.stop_all()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
