#!/usr/bin/env python3
"""Profiles mitm-proxy in one benchmark scenario (see bench/README.md, "Profiling").

    python3 bench/profile.py --tool callgrind --scenario keepalive   # instruction counts, any load
    python3 bench/profile.py --tool perf --scenario download         # sampled time, kernel included
    python3 bench/profile.py --tool resident --scenario download     # where the resident set is afterwards

Starts the benchmark's origin (nginx) and mitm-proxy (under valgrind --tool=callgrind, or with
`perf record -e cpu-clock` attached), drives one scenario with bench-loadgen, counts only the load
generator's measured window, and prints the top functions, demangled. Outputs stay in --out.
Build first with scripts/bench --smoke (it builds mitm-proxy and the load generator).
"""

from __future__ import annotations

import argparse
import bisect
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402


def demangle(text: str) -> str:
    swift = shutil.which("swift-demangle") or "/opt/swift/usr/bin/swift-demangle"
    try:
        return subprocess.run([swift, "--simplified"], input=text, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return text


def context_switches(pid: int) -> int:
    """Voluntary + involuntary context switches summed over the process's live threads."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            for line in (task / "status").read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def resident_report(pid: int, binary: Path) -> str:
    """Where the proxy's resident set is after the scenario: kibibytes per mapping (`/proc/PID/smaps`), then the
    runs of resident pages in the binary's code (`/proc/PID/pagemap`), each named by the first function in it:
    code outside the first run ran without being in the link order (bench/link_order.py)."""
    rss: dict[str, int] = {}
    current = ""
    text_ranges: list[tuple[int, int, int]] = []
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
            path = fields[5] if len(fields) > 5 else "[anonymous]"
            current = f"{Path(path).name} {fields[1]}"
            if path == str(binary.resolve()) and "x" in fields[1]:
                start, end = (int(value, 16) for value in fields[0].split("-"))
                text_ranges.append((start, end, int(fields[2], 16)))
        elif fields[0] == "Rss:":
            rss[current] = rss.get(current, 0) + int(fields[1])
    lines = [f"resident set {sum(rss.values()):,} KiB"]
    lines += [f"{kib:8,} KiB  {name}" for name, kib in sorted(rss.items(), key=lambda item: -item[1])[:16]]
    listing = subprocess.run(["nm", "-n", "--defined-only", str(binary)], capture_output=True, text=True).stdout
    symbols = [(int(fields[0], 16), fields[2]) for fields in (line.split() for line in listing.splitlines())
               if len(fields) == 3 and fields[1] in "tTwW"]
    segment = next((int(fields[2], 16) - int(fields[1], 16)  # virtual address - file offset of the code segment
                    for fields in (line.split() for line in subprocess.run(["readelf", "-lW", str(binary)], capture_output=True,
                                                                          text=True).stdout.splitlines())
                    if fields[:1] == ["LOAD"] and "E" in fields[6:-1]), 0)
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end, offset in text_ranges:
            runs: list[list[int]] = []
            for page in range(start, end, 4096):
                pagemap.seek(page // 4096 * 8)
                if int.from_bytes(pagemap.read(8), "little") >> 63:
                    address = page - start + offset + segment
                    if runs and runs[-1][1] == address:
                        runs[-1][1] = address + 4096
                    else:
                        runs.append([address, address + 4096])
            lines.append(f"code of {binary.name}: {sum(b - a for a, b in runs) // 1024:,} KiB resident in {len(runs)} runs")
            for first, last in runs:
                index = max(0, bisect.bisect_right(symbols, (first, "")) - 1)
                name = demangle(symbols[index][1]).strip() if symbols else "?"
                lines.append(f"  {first:#x}-{last:#x} {(last - first) // 1024:6,} KiB  {name[:100]}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", choices=["callgrind", "perf", "strace", "massif", "resident"], default="callgrind")
    parser.add_argument("--scenario", choices=["keepalive", "newconn", "download", "idle", "first", "h2-keepalive", "h2-download", "go-keepalive", "go-close", "go-h2"],
                        default="keepalive", help="go-*: driven by bench/goload (Go's net/http) instead of bench-loadgen")
    parser.add_argument("--mitm-proxy", default=None, dest="mitm_proxy")
    parser.add_argument("--loadgen", default=None)
    parser.add_argument("--out", default="bench-results/profile")
    parser.add_argument("--duration", type=float, default=None)
    parser.add_argument("--warmup", type=float, default=None,
                        help="seconds before the measured window (default 3 under valgrind, 1 otherwise; more on a busy "
                             "machine, where valgrind's first handshakes may not be done in 3)")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--whole-life", action="store_true", dest="whole_life",
                        help="callgrind: count from start-up to exit, not only the measured window, with mangled names "
                             "(what bench/link_order.py reads)")
    parser.add_argument("--peer", choices=["mitm-proxy", "nginx"], default="mitm-proxy",
                        help="nginx: the reference reverse proxy, for comparison (perf and strace only)")
    parser.add_argument("--web", action="store_true", help="mitm-proxy with its web UI on, as shipped (default: --no-web)")
    parser.add_argument("--records", action="store_true",
                        help="mitm-proxy with --har, --events and --report to files (what the recording costs)")
    args = parser.parse_args()

    root = Path(__file__).resolve().parent.parent
    binary = args.mitm_proxy or next((str(p) for p in [root / ".build/release/mitm-proxy", root / ".build-bench/release/mitm-proxy"]
                                      if p.exists()), None)
    loadgen = args.loadgen or str(root / ".build/bench-loadgen")
    goload = str(root / ".build/bench-goload")
    if not binary or not Path(loadgen).exists():
        raise SystemExit("profile.py: build first (scripts/bench --smoke builds mitm-proxy and .build/bench-loadgen)")
    out = Path(args.out) / f"{args.tool}-{args.scenario}{'-records' if args.records else ''}"
    out.mkdir(parents=True, exist_ok=True)
    bench.raise_open_files()
    work = Path(tempfile.mkdtemp(prefix="mitm-proxy-profile-"))
    processes = bench.Processes()
    try:
        pki = work / "pki"
        subprocess.run(["bash", str(bench.HERE / "make-pki.sh"), str(pki)], check=True)
        www = work / "www"
        www.mkdir()
        (www / "200b").write_bytes(b"x" * 199 + b"\n")
        with open(www / "100m", "wb") as f:
            block = bytes(range(256)) * 4096
            for _ in range(100):
                f.write(block)
        for entry in [www, *www.iterdir()]:
            entry.chmod(0o755 if entry.is_dir() else 0o644)
        work.chmod(0o755)
        origin = bench.start_nginx("origin", bench.HERE / "nginx" / "origin.conf.in", work / "origin",
                                   {"WORKERS": "1", "PKI": str(pki), "WWW": str(www)}, processes, shutil.which("nginx") or "/usr/sbin/nginx")
        callgrind_out = out / "callgrind.out"
        wrapper = None
        if args.tool == "callgrind":
            wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind_out}",
                       "--demangle=no" if args.whole_life else "--instr-atstart=no"]
        elif args.tool == "massif":  # heap by allocation site; the peak is while the idle connections are held
            wrapper = ["valgrind", "--tool=massif", f"--massif-out-file={out / 'massif.out'}", "--threshold=0.5",
                       "--peak-inaccuracy=0.5", "--max-snapshots=200"]
        names = [bench.ORIGIN_NAME] + [f"p-n{i}.bench.test" for i in range(40)]
        if args.peer == "nginx":
            if args.tool not in ("perf", "strace"):
                raise SystemExit("profile.py: --peer nginx works with --tool perf or strace")
            server = bench.start_nginx("reference", bench.HERE / "nginx" / "reference.conf.in", work / "reference",
                                       {"WORKERS": "2", "PKI": str(pki), "ORIGIN_PORT": str(origin.port)}, processes,
                                       shutil.which("nginx") or "/usr/sbin/nginx")
            peer = bench.Peer("nginx", server, server.port, explicit=False)
            out = Path(args.out) / f"{args.tool}-{args.scenario}-nginx"
            out.mkdir(parents=True, exist_ok=True)
        else:
            records = ["--har", str(work / "run.har"), "--events", str(work / "events.jsonl"), "--report", str(work / "report.json")]
            server = bench.start_mitm_proxy(binary, work / "mitm-proxy", pki, names, processes, wrapper=wrapper, web=args.web,
                                            extra=records if args.records else None)
            peer = bench.Peer("mitm-proxy", server, server.port, explicit=True)
        pids = ",".join(str(pid) for pid in server.pids)
        runner = bench.Runner(loadgen, origin, work, timeout=1800)
        slow = args.tool in ("callgrind", "massif")
        perf: list[subprocess.Popen] = []
        switches: list[int] = []

        def on_mark(mark: str) -> None:
            if args.tool in ("massif", "resident") or (args.tool == "callgrind" and args.whole_life):
                return
            if args.tool == "callgrind":
                subprocess.run(["callgrind_control", "-i", "on" if mark == "START" else "off", str(server.process.pid)],
                               capture_output=True)
            elif args.tool == "strace":
                if mark == "START":
                    perf.append(subprocess.Popen(["strace", "-c", "-f", "-o", str(out / "strace.txt")] + [a for pid in server.pids for a in ("-p", str(pid))],
                                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                    switches.append(sum(context_switches(pid) for pid in server.pids))
                elif perf:
                    switches.append(sum(context_switches(pid) for pid in server.pids))
                    perf[0].send_signal(signal.SIGINT)
                    perf[0].wait(timeout=60)
            elif mark == "START":
                switches.append(sum(context_switches(pid) for pid in server.pids))
                perf.append(subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "4000", "-g", "-o", str(out / "perf.data"),
                                              "-p", pids], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            elif perf:
                switches.append(sum(context_switches(pid) for pid in server.pids))
                perf[0].send_signal(signal.SIGINT)
                perf[0].wait(timeout=60)

        target = runner.target_arguments(peer)
        warmup = str(args.warmup if args.warmup is not None else (3 if slow else 1))
        if args.scenario == "keepalive":
            arguments = ["--mode", "keepalive", *target, "--path", "/200b", "--concurrency", "32",
                         "--warmup", warmup, "--duration", str(args.duration or (20 if slow else 10))]
        elif args.scenario == "h2-keepalive":
            arguments = ["--mode", "keepalive", *target, "--path", "/200b", "--concurrency", "1", "--h2", "32",
                         "--warmup", warmup, "--duration", str(args.duration or (20 if slow else 10))]
        elif args.scenario == "newconn":
            arguments = ["--mode", "newconn", *target, "--path", "/200b", "--concurrency", "16",
                         "--warmup", warmup, "--duration", str(args.duration or (20 if slow else 10))]
        elif args.scenario == "first":
            arguments = ["--mode", "first", "--connect", f"127.0.0.1:{peer.port}", "--proxy", "per-name", "--path", "/200b",
                         "--gap-ms", "20", "--count", "40", "--names", f"p-n,.bench.test,{origin.port}"]
        elif args.scenario == "idle":
            arguments = ["--mode", "hold", *target, "--path", "/200b", "--count", "300", "--concurrency", "16",
                         "--duration", "60"]
        elif args.scenario.startswith("go-"):
            arguments = ["--mode", args.scenario[3:], *target, "--path", "/200b", "--concurrency", "16" if args.scenario == "go-close" else "32",
                         "--warmup", warmup, "--duration", str(args.duration or (20 if slow else 10))]
        else:
            arguments = ["--mode", "download", *target, "--path", "/100m", "--count", "1" if slow else "5"]
            if args.scenario == "h2-download":
                arguments += ["--h2", "1"]
        if slow and not args.scenario.startswith("go-"):
            arguments += ["--stall", "120"]  # valgrind slows every event down
        if args.scenario == "idle":
            def on_held(_: dict) -> None:
                time.sleep(5 if slow else 1)
                if args.tool == "massif":  # what the held connections keep once idle relays parked (the peak may be earlier)
                    subprocess.run(["vgdb", f"--pid={server.process.pid}", "detailed_snapshot", str(out / "held.massif")],
                                   capture_output=True, timeout=120)
            result = runner.run(peer, arguments, on_held=on_held)
            result.setdefault("proxy_cpu_us", 0.0)
            result["bytes"] = 0
        else:
            result = runner.run(peer, arguments, on_mark=on_mark, program=goload if args.scenario.startswith("go-") else "")
        units = result["requests"] if not args.scenario.endswith("download") else result["bytes"] / 1048576
        unit = "request" if not args.scenario.endswith("download") else "MiB"
        if args.scenario == "idle":
            units = result.get("held", 0)
        if args.scenario == "first":  # a first connection and a repeat per name, each forging for its names
            units, unit = 40, "new name"
            print(f"first contact: median first {sorted(result['first_us'])[20] / 1000:.2f} ms, "
                  f"repeat {sorted(result['repeat_us'])[20] / 1000:.2f} ms")
        print(f"{args.peer}: {result['requests']} requests, {result.get('bytes', 0) / 1048576:.1f} MiB; "
              f"proxy CPU {result['proxy_cpu_us'] / max(units, 1):,.1f} µs per {unit} (inflated by the profiler)")
        if len(switches) == 2:
            print(f"context switches of the proxy's live threads: {(switches[1] - switches[0]) / max(units, 1):.2f} per {unit}")
        if args.tool == "resident":
            text = resident_report(server.process.pid, Path(binary))
            (out / "resident.txt").write_text(text)
            print(text)
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=120)
        (out / "units.txt").write_text(f"{units} {unit}\n")
        if args.tool == "massif":
            text = subprocess.run(["ms_print", "--threshold=0.5", str(out / "massif.out")], capture_output=True, text=True).stdout
            text = demangle(text)
            (out / "ms_print.txt").write_text(text)
            print("\n".join(text.splitlines()[:args.top + 60]))
        elif args.tool == "callgrind":
            files = sorted(out.glob("callgrind.out*"), key=lambda p: p.stat().st_size)
            data = files[-1]
            for inclusive in ("no", "yes"):
                report = subprocess.run(["callgrind_annotate", f"--inclusive={inclusive}", f"--threshold=99", str(data)],
                                        capture_output=True, text=True).stdout
                text = demangle(report)
                name = "exclusive" if inclusive == "no" else "inclusive"
                (out / f"{name}.txt").write_text(text)
                print(f"\n=== callgrind, {name} (instructions; {units:,.0f} {unit}s) ===")
                print("\n".join(text.splitlines()[:args.top + 20]))
        elif args.tool == "strace":
            text = (out / "strace.txt").read_text()
            print(f"\n=== strace -c -f (system calls during the window; {units:,.0f} {unit}s) ===")
            print(text)
        elif args.tool == "perf":
            report = subprocess.run(["perf", "report", "-i", str(out / "perf.data"), "--no-children", "--sort", "dso,symbol",
                                     "--stdio", "-g", "none", "--percent-limit", "0.5"], capture_output=True, text=True).stdout
            text = demangle(report)
            (out / "perf-flat.txt").write_text(text)
            print("\n".join(line for line in text.splitlines() if line and not line.startswith("#"))[: 200 * 80])
    finally:
        processes.stop_all()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
