#!/usr/bin/python3
"""Checks that every function declared (not defined) in rs_math.rsh is defined in kiln_rslib.bc.

kilnc links kiln_rslib.bc into kernel modules; a declaration without a definition there would only fail when a
kernel calls it, at JIT time. Usage: decl_check.py <clang-19> <llvm-nm-19> <prelude dir> <kiln_rslib.bc>
"""
import json
import subprocess
import sys
import tempfile


def declared(clang, prelude):
    with tempfile.NamedTemporaryFile("w", suffix=".c") as src:
        src.write('#define KILN_HALF_MATH 1\n#include "rs_math.rsh"\n')
        src.flush()
        dump = subprocess.run([clang, "-target", "x86_64-unknown-linux-gnu", "-ffreestanding", "-std=c99",
                               "-fsyntax-only", "-Xclang", "-ast-dump=json", "-I", prelude, src.name],
                              check=True, capture_output=True, text=True).stdout
    names = set()
    for decl in json.loads(dump).get("inner", []):
        if decl.get("kind") != "FunctionDecl" or decl.get("storageClass") == "static":
            continue
        if "rs_math.rsh" not in json.dumps(decl.get("loc", {})) and decl.get("isImplicit"):
            continue
        if any(inner.get("kind") == "CompoundStmt" for inner in decl.get("inner", [])):
            continue
        if decl.get("mangledName", "").startswith("_Z") or decl.get("name", "").startswith("rs"):
            names.add(decl.get("mangledName", decl.get("name")))
    return names


def defined(nm, bitcode):
    out = subprocess.run([nm, "--defined-only", bitcode], check=True, capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    clang, nm, prelude, bitcode = sys.argv[1:5]
    want = declared(clang, prelude)
    have = defined(nm, bitcode)
    missing = sorted(want - have)
    if len(want) < 500:
        print(f"only {len(want)} declarations found in rs_math.rsh: the check is broken")
        return 1
    if missing:
        print(f"{len(missing)} of {len(want)} declared functions are not defined in {bitcode}:")
        for name in missing:
            print("  " + name)
        return 1
    print(f"all {len(want)} declared functions are defined in {bitcode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
