#!/usr/bin/env python3
"""Writes the link order file: the functions mitm-proxy runs, so that the linker puts them together.

    scripts/build-release
    python3 bench/link_order.py          # 2-3 minutes; rewrites Sources/mitm-proxy/LinkOrder.txt

The kernel maps a program's code into its resident set in whole page-cache folios (up to 2 MiB on this
machine's ext4), not page by page, so code the proxy runs that lies scattered over its 18 MiB of .text
made 9.2 MiB of it resident although only about 1 MiB of it ever runs. Release builds on Linux pass this
file to lld (`--symbol-ordering-file`, see Package.swift), which places the sections holding these
functions first: the Swift runtime's libraries give each function a section of its own, our modules and
C libraries one section per file (bench/README.md, "Code that runs, together").

Each benchmark scenario runs under callgrind from start-up to exit (bench/profile.py --whole-life); every
function of the binary that executed is listed, those that every scenario ran first (start-up and the
relaying core), then by the number of scenarios that ran them, then by name, so the file diffs stably.
Functions the file names that a later build no longer has are skipped by the linker; regenerate the file
when the bench shows the resident set grow (functions that are new and run are not ordered until then).
SwiftPM does not relink when only this file changed: `rm .build/release/mitm-proxy` before building.
"""

from __future__ import annotations

import argparse
import re
import shutil
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


def text_symbols(binary: Path) -> Counter[str]:
    """The binary's function names, each with the number of functions of that name (local names repeat)."""
    listing = subprocess.run(["nm", "--defined-only", str(binary)], capture_output=True, text=True, check=True).stdout
    return Counter(fields[2] for fields in (line.split() for line in listing.splitlines())
                   if len(fields) == 3 and fields[1] in "tTwW")


def link_inputs() -> list[Path]:
    """The objects and static libraries the release build links: ours, the packages', the toolchain's."""
    objects = ROOT / ".build/release/mitm-proxy.product/Objects.LinkFileList"
    if not objects.exists():
        raise SystemExit("link_order.py: build first: scripts/build-release")
    toolchain = Path(shutil.which("swiftc") or "/opt/swift/usr/bin/swiftc").resolve().parent.parent
    return [Path(line) for line in objects.read_text().split()] + sorted((toolchain / "lib/swift_static/linux").glob("*.a"))


def names_with_sections_of_their_own(inputs: list[Path]) -> set[str]:
    """Function names every definition of which sits in a section of its own (`.text.<name>`). A local name
    that many objects define (`objectdestroyTm`, a generic specialization) orders every copy: that is harmless
    where each copy is a section of its own, but a copy inside an object's one big `.text` (C files, the
    regex parser, the JSON decoder, packages built without function sections) would drag all of it into the
    hot region."""
    own: dict[str, bool] = {}
    for chunk in range(0, len(inputs), 64):
        listing = subprocess.run(["objdump", "-t", *map(str, inputs[chunk:chunk + 64])], capture_output=True, text=True).stdout
        for line in listing.splitlines():
            left, tab, right = line.partition("\t")
            fields = left.split()
            if not tab or len(fields) < 3 or " F " not in left or fields[-1] == "*UND*":
                continue
            name = right.split()[-1]
            section = fields[-1]
            separate = section.startswith(".text.") and not section.startswith((".text.unlikely", ".text.hot", ".text.startup"))
            own[name] = own.get(name, True) and separate
    return {name for name, separate in own.items() if separate}


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
    separable = names_with_sections_of_their_own(link_inputs())
    orderable = {name for name, count in symbols.items() if count == 1 or name in separable}
    print(f"{len(orderable):,} of {len(symbols):,} function names can be ordered")
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
        ran &= orderable
        print(f"{scenario}: {len(ran):,} functions of the binary ran")
        runs.update(ran)
    ordered = sorted(runs, key=lambda name: (-runs[name], name))
    Path(args.out).write_text("".join(name + "\n" for name in ordered))
    everywhere = sum(1 for name in ordered if runs[name] == len(scenarios))
    print(f"{args.out}: {len(ordered):,} functions, {everywhere:,} of them ran in every scenario")
    return 0


if __name__ == "__main__":
    sys.exit(main())
