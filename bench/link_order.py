#!/usr/bin/env python3
"""Writes the link order file: the functions mitm-proxy runs, so that the linker puts them together.

    swift build -c release --product mitm-proxy
    python3 bench/link_order.py          # about 10 minutes; rewrites Sources/mitm-proxy/LinkOrder.txt

The kernel maps a program's code into its resident set in whole page-cache folios (up to 2 MiB on this
machine's ext4), not page by page, so code the proxy runs that lies scattered over its 18 MiB of .text
made 9.2 MiB of it resident although only about 1 MiB of it ever runs. Release builds on Linux compile
each function into a section of its own and pass this file to lld (`--symbol-ordering-file`, see
Package.swift): what runs lies together at the start of .text (bench/README.md, "Code that runs, together").

Each benchmark scenario runs under callgrind from start-up to exit (bench/profile.py --whole-life); every
function of the binary that executed is listed, those that every scenario ran first (start-up and the
relaying core), then by the number of scenarios that ran them, then by name, so the file diffs stably.
Functions the file names that a later build no longer has are skipped by the linker; regenerate the file
when the bench shows the resident set grow.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUNCTION_LINE = re.compile(r"c?fn=\(\d+\)\s+(\S.*)$")


def executed_functions(callgrind_out: Path) -> set[str]:
    names: set[str] = set()
    with open(callgrind_out, errors="replace") as lines:
        for line in lines:
            match = FUNCTION_LINE.match(line)
            if match:
                names.add(match.group(1).strip())
    return names


def text_symbols(binary: Path) -> set[str]:
    listing = subprocess.run(["nm", "--defined-only", str(binary)], capture_output=True, text=True, check=True).stdout
    return {fields[2] for fields in (line.split() for line in listing.splitlines())
            if len(fields) == 3 and fields[1] in "tTwW"}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mitm-proxy", default=str(ROOT / ".build/release/mitm-proxy"), dest="mitm_proxy")
    parser.add_argument("--scenarios", default="download,keepalive,newconn,idle,first")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of load per scenario under callgrind")
    parser.add_argument("--out", default=str(ROOT / "Sources/mitm-proxy/LinkOrder.txt"))
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="mitm-proxy-link-order-"))
    binary = work / "mitm-proxy"  # without DWARF: valgrind reads the symbol table only, and quickly
    subprocess.run(["strip", "--strip-debug", "-o", str(binary), args.mitm_proxy], check=True)
    symbols = text_symbols(binary)
    runs: Counter[str] = Counter()
    scenarios = args.scenarios.split(",")
    for scenario in scenarios:
        out = work / scenario
        subprocess.run([sys.executable, str(ROOT / "bench/profile.py"), "--tool", "callgrind", "--whole-life",
                        "--scenario", scenario, "--mitm-proxy", str(binary), "--out", str(out),
                        "--duration", str(args.duration), "--top", "0"], check=True, stdout=subprocess.DEVNULL)
        ran: set[str] = set()
        for data in out.glob(f"callgrind-{scenario}/callgrind.out*"):
            ran |= executed_functions(data)
        ran &= symbols
        print(f"{scenario}: {len(ran):,} functions of the binary ran")
        runs.update(ran)
    ordered = sorted(runs, key=lambda name: (-runs[name], name))
    Path(args.out).write_text("".join(name + "\n" for name in ordered))
    everywhere = sum(1 for name in ordered if runs[name] == len(scenarios))
    print(f"{args.out}: {len(ordered):,} functions, {everywhere:,} of them ran in every scenario")
    return 0


if __name__ == "__main__":
    sys.exit(main())
