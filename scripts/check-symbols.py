#!/usr/bin/env python3
"""Checks, on the built library's object files, that calls across folders go in the allowed
directions: the link-level twin of scripts/check-includes.py.

An include check cannot see a call made through a declaration a folder may include: core/tensor.h
declares Tensor::to, but dispatch/ops/tensor_methods.cpp defines it, so a core file calling
t.to(...) calls the dispatcher while including nothing of dispatch. This check reads the symbols
every object file leaves undefined (nm) and finds the folder whose objects define them; a
function defined only in folders that the caller's folder may not include is a violation
(ALLOWED in check-includes.py; inline functions and templates are defined where they are used,
so they never count). backends/cuda's rooms are not checked here, only folders.

    scripts/check-symbols.py OBJECT...   (CTest runs it on $<TARGET_OBJECTS:anatomy>)
"""
import collections
import importlib.util
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("check_includes", HERE / "check-includes.py")
check_includes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_includes)


def folder_of_object(path: str):
    """The library folder an object file was compiled from (.../anatomy.dir/<source path>.o)."""
    marker = "anatomy.dir/"
    if marker not in path:
        return None
    source = path.split(marker, 1)[1]
    while source.startswith("./"):
        source = source[2:]
    return check_includes.folder_of(source)


def symbols(path: str, undefined: bool):
    args = ["nm", "-C", "--undefined-only" if undefined else "--defined-only", path]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    result = set()
    for line in out.splitlines():
        parts = line.split(None, 2) if not undefined else line.split(None, 1)
        if undefined and len(parts) == 2 and parts[0] == "U":
            result.add(parts[1])
        elif not undefined and len(parts) == 3 and parts[1] in "TW":
            result.add(parts[2])
    return result


def main(objects):
    objects = [o for o in objects if folder_of_object(o)]
    if not objects:
        print("check-symbols: no object files of the library given", file=sys.stderr)
        return 2
    defined_in = collections.defaultdict(set)
    for o in objects:
        for s in symbols(o, undefined=False):
            defined_in[s].add(folder_of_object(o))
    violations = []
    for o in objects:
        src = folder_of_object(o)
        ok = {src} | check_includes.ALLOWED[src]
        for s in sorted(symbols(o, undefined=True)):
            where = defined_in.get(s)
            if where and not (where & ok):
                violations.append(f"{o.split('anatomy.dir/', 1)[1].lstrip('./')} ({src}) calls {s}, defined in {', '.join(sorted(where))}")
    for v in violations:
        print("check-symbols:", v)
    if violations:
        return 1
    print(f"check-symbols: {len(objects)} object files call across folders only in the allowed directions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
