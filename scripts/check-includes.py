#!/usr/bin/env python3
"""Checks that includes across the library's folders go in the allowed directions.

    core  <-  dispatch  <-  autograd  <-  nn/optim  <-  amp
                        <-  backends/cpu, backends/meta
    core  <-  alloc     <-  backends/cuda (its memory providers implement alloc's interfaces)

A folder may include its own files and the folders to its left; subfolders belong to their
folder (dispatch/ops/ is dispatch). nn/optim/ (the optimizers) is a layer of the library inside
nn/: it may include what its place above says, where the rest of nn/ is written as a user of the
library (PUBLIC_ONLY below). Inside backends/cuda/, the rooms have directions of their own
(ROOMS below; each room's README says the same): runtime/ and common/ at the bottom, memory/ on
runtime/, the kernel families on those, and the row kernels of reduce/ under norm/ and softmax/.
A kernel family's headers other than the building blocks it shares (SHARED below) are internal
to its room: its launcher header, launch.h, is for its own registration code.

The public device API, cuda.h at the root, declares what backends/cuda/ (or, in a build without
CUDA, backends/no_cuda/) implements: it may include core/ and alloc/ only, and those two backends
may include it.

Above the library, testing/ (and the umbrella header anatomy.h, and backend.h) may include any
of it. tools/ and bench/ are users of the library and include only the public headers
(anatomy/anatomy.h, anatomy/cuda.h, anatomy/backend.h, anatomy/interop/dlpack.h,
anatomy/graphed/make_graphed.h, anatomy/profiler/profiler.h and nn/'s), plus the testing/
headers that reach only public ones (the op table, the synthetic allocation trace, the simulated
device's snapshot; a testing/ header that includes an internal header, such as the traces' replay
through the caching allocator, counts as that internal header) and their own folder's files
(tools/chapters.h; bench/peer/peer.h, included by its own name). examples/ is a user too: the
public headers and its own files, without testing/. Every folder of tests/ follows the same rule
as tools/ (its helpers, such as tests/gpu/gpu_test_util.h or tests/alloc/alloc_test_util.h, are
included by their own names; tests/README.md). A benchmark that measures an internal component
(the caching allocator's policy, the CUDA allocator's lookups) and a test of internal machinery
(the caching allocator over the simulated device, the dispatcher's tables, the CPU's vectorized
loops, the CUDA memory provider) include it by a listed exception naming what it measures or
tests, so that reaching past the public headers is a decision.
interop/ (DLPack) is compiled into the library but written as a user of it: it includes
anatomy/anatomy.h, anatomy/cuda.h and its own folder only.

The known exceptions, each with the change that removes it or the reason it stays, are listed in
scripts/include-exceptions.txt: an include that breaks these rules and is not listed fails the
check, and so does a listed exception that no longer occurs (delete its line). scripts/test.sh
runs this first.

    scripts/check-includes.py          check; prints each violation, exit status 1 if any
    scripts/check-includes.py --list   print every include across folders, allowed or not
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXCEPTIONS = ROOT / "scripts" / "include-exceptions.txt"

# The library's folders and what each may include besides itself.
ALLOWED = {
    "core": set(),
    "dispatch": {"core"},
    "alloc": {"core"},
    "autograd": {"core", "dispatch"},
    "nn/optim": {"core", "dispatch", "autograd"},
    "amp": {"core", "dispatch", "autograd", "nn/optim"},
    "backends/cpu": {"core", "dispatch"},
    "backends/meta": {"core", "dispatch"},
    "backends/cuda": {"core", "dispatch", "alloc", "cuda.h"},
    "backends/no_cuda": {"core", "alloc", "cuda.h"},
    "cuda.h": {"core", "alloc"},
}
# The public headers: the umbrella header, the device API, the backend author's API, DLPack's
# exchange, make_graphed, the profiler and nn/.
PUBLIC_HEADERS = ("anatomy.h", "cuda.h", "backend.h", "interop/dlpack.h", "graphed/make_graphed.h", "profiler/profiler.h",
                  "nn/")
# Users of the library: what their files may include (besides a listed exception). interop/ is
# built into the library but, like a user, reaches it through the public headers only.
PUBLIC_ONLY = {
    "tools": PUBLIC_HEADERS + ("testing/", "tools/"),
    "examples": PUBLIC_HEADERS + ("examples/",),
    "bench": PUBLIC_HEADERS + ("testing/", "bench/"),
    "tests": PUBLIC_HEADERS + ("testing/",),
    "interop": ("anatomy.h", "cuda.h", "interop/", "profiler/profiler.h", "nn/safetensors.h"),
    "graphed": ("anatomy.h", "cuda.h", "graphed/"),
    "nn": ("anatomy.h", "cuda.h", "nn/"),
    "profiler": ("anatomy.h", "cuda.h", "core/json_string.h", "profiler/"),
}


def public_only_folder(path: str):
    """The PUBLIC_ONLY folder a path belongs to, or None (also for a library folder inside one:
    nn/optim/ is checked by ALLOWED)."""
    if folder_of(path) is not None:
        return None
    return next((f for f in PUBLIC_ONLY if path.startswith(f + "/")), None)
# backends/cuda/'s rooms and the rooms each may include besides itself (and what its folder may).
ROOMS = {
    "runtime": set(),
    "common": set(),
    "memory": {"runtime"},
    "elementwise": {"runtime", "memory", "common"},
    "index": {"runtime", "memory", "common"},
    "sort": {"runtime", "memory", "common"},
    "scan": {"runtime", "memory", "common"},
    "random": {"runtime", "memory", "common"},
    "blas": {"runtime", "memory", "common", "elementwise"},
    "reduce": {"runtime", "memory", "common", "elementwise"},
    "norm": {"runtime", "memory", "common", "elementwise", "reduce"},
    "softmax": {"runtime", "memory", "common", "elementwise", "reduce"},
    "loss": {"runtime", "memory", "common", "elementwise", "reduce"},
    "channel_norm": {"runtime", "memory", "common", "elementwise"},
    "optim": {"runtime", "memory", "common", "elementwise", "reduce"},
    "pooling": {"runtime", "common", "elementwise"},
    "graph": {"runtime", "memory"},
    "conv": {"runtime", "memory"},
}
# A kernel room exposes one launcher header, launch.h, to its own registration code; its other
# headers are internal to it, except the building blocks it shares with the rooms above it, listed
# here. Another room may include only these (runtime/, memory/ and common/ are not kernel families:
# every header of theirs is their interface).
SHARED = {
    "elementwise": {"elementwise.cuh", "elementwise_layout.h", "elementwise_math.cuh", "dependent_launch.cuh"},
    "reduce": {"reduce.cuh", "row_kernel.cuh"},
}
INTERFACE_ROOMS = {"runtime", "memory", "common"}
SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]anatomy/([^">]+)[">]')


def folder_of(path: str):
    """The library folder a path (relative to the root) belongs to, or None above the library."""
    for folder in sorted(ALLOWED, key=len, reverse=True):
        if path == folder or path.startswith(folder + "/"):
            return folder
    return None


def room_of(path: str):
    """The room of a path under backends/cuda/, or None (a file of the folder itself)."""
    parts = path.split("/")
    return parts[2] if len(parts) > 3 and parts[:2] == ["backends", "cuda"] else None


def anatomy_includes(path: str):
    """The anatomy/ paths a file includes."""
    text = (ROOT / path).read_text(encoding="utf-8", errors="replace")
    return [m.group(1) for m in map(INCLUDE.match, text.splitlines()) if m]


def is_public(target: str) -> bool:
    return any(target == p if not p.endswith("/") else target.startswith(p) for p in PUBLIC_HEADERS)


def internal_testing_headers():
    """The testing/ headers that reach an internal header, directly or through another testing/
    header: a user (tools/, bench/, a test that follows the public rule) including one reaches past
    the public headers as if it included the internal header itself."""
    headers = {p for p in tracked_sources() if p.startswith("testing/") and p.endswith(".h")}
    internal = {}

    def reaches(header: str, seen: frozenset) -> bool:
        if header not in internal:
            internal[header] = False
            for t in anatomy_includes(header):
                if t.startswith("testing/"):
                    if t in headers and t not in seen and reaches(t, seen | {t}):
                        internal[header] = True
                elif not is_public(t):
                    internal[header] = True
        return internal[header]

    return {h for h in headers if reaches(h, frozenset({h}))}


def public_only_includes():
    """(file, included path, allowed) for every anatomy include of a file of a PUBLIC_ONLY folder."""
    internal_testing = internal_testing_headers()
    for path in tracked_sources():
        top = public_only_folder(path)
        if top is None:
            continue
        may = PUBLIC_ONLY[top]
        for target in anatomy_includes(path):
            ok = any(target == p if not p.endswith("/") else target.startswith(p) for p in may)
            yield path, target, ok and target not in internal_testing


def allowed(src_path: str, src: str, target: str, dst):
    if dst is None or (dst != src and dst not in ALLOWED[src]):
        return False
    if src == dst == "backends/cuda":
        a, b = room_of(src_path), room_of(target)
        if a == b or a is None:
            return True
        if a not in ROOMS or b not in ROOMS[a]:
            return False
        return b in INTERFACE_ROOMS or target.rsplit("/", 1)[-1] in SHARED.get(b, set())
    return True


def tracked_sources():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return [p for p in out.splitlines() if pathlib.PurePosixPath(p).suffix in SOURCE_SUFFIXES]


def cross_folder_includes():
    """(file, included path, allowed) for every include of another folder's file."""
    for path in tracked_sources():
        src = folder_of(path)
        if src is None:
            continue
        text = (ROOT / path).read_text(encoding="utf-8", errors="replace")
        for line in text.splitlines():
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            dst = folder_of(target)
            if dst == src and (src != "backends/cuda" or room_of(path) == room_of(target)):
                continue
            yield path, target, allowed(path, src, target, dst)
    yield from public_only_includes()


def read_exceptions():
    listed = set()
    for raw in EXCEPTIONS.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        file, arrow, target = line.partition("->")
        if not arrow:
            sys.exit(f"check-includes: {EXCEPTIONS.name}: expected 'file -> header', got: {raw}")
        listed.add((file.strip(), target.strip()))
    return listed


def main():
    if sys.argv[1:] == ["--list"]:
        for path, target, ok in cross_folder_includes():
            print(f"{'ok' if ok else 'BREAKS'}  {path} -> {target}")
        return 0
    listed = read_exceptions()
    seen, new = set(), []
    for path, target, ok in cross_folder_includes():
        if ok:
            continue
        if (path, target) in listed:
            seen.add((path, target))
        else:
            new.append((path, target))
    for path, target in new:
        top = public_only_folder(path)
        if top is not None:
            may = ", ".join(f"anatomy/{p}" for p in PUBLIC_ONLY[top] if p != "testing/")
            why = " (it reaches internal headers)" if target.startswith("testing/") else ""
            also = " and the testing/ headers that reach only those" if "testing/" in PUBLIC_ONLY[top] else ""
            print(f"check-includes: {path} includes anatomy/{target}{why}; {top}/ may include only the public headers "
                  f"({may}){also}")
            continue
        src, room = folder_of(path), room_of(path)
        if src == "backends/cuda" and folder_of(target) == src and room in ROOMS:
            other = room_of(target)
            if other in ROOMS[room]:
                shared = ", ".join(sorted(SHARED.get(other, set()))) or "none"
                print(f"check-includes: {path} includes anatomy/{target}, internal to backends/cuda/{other}/ "
                      f"(its headers other rooms may include: {shared})")
                continue
            may = ", ".join(f"{r}/" for r in sorted(ROOMS[room])) or "no other room"
            print(f"check-includes: {path} includes anatomy/{target}; backends/cuda/{room}/ may include {may}")
            continue
        may = ", ".join(sorted(ALLOWED[src])) or "nothing outside itself"
        print(f"check-includes: {path} includes anatomy/{target}; {src}/ may include {may}")
    stale = sorted(listed - seen)
    for path, target in stale:
        print(f"check-includes: {EXCEPTIONS.name} lists {path} -> {target}, which no longer occurs: delete the line")
    if new or stale:
        return 1
    print(f"check-includes: includes go in the allowed directions ({len(listed)} listed exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
