#!/usr/bin/env python3
"""Keeps Kiln's layers honest: fails when a file includes across a forbidden direction.

The rules are the picture in docs/architecture.md ("Layers"), as a table: for each folder, the folders its
files may include. Only Kiln's own headers are checked (quoted includes, and <kiln/...>); system and
third-party headers (LLVM, Clang, FlatBuffers, Vulkan, glslang, SPIRV-Tools) are not, except that the public
headers in include/kiln/ may include nothing but kiln/ headers and the C standard library.

Usage: check_layers.py [SOURCE_ROOT]   (default: the repository this script is in)
"""
import os
import re
import sys

# Folder (longest match wins) -> prefixes of Kiln paths its files may include. A quoted include without a
# slash is a file of the including folder, and always allowed.
RULES = [
    ("include/kiln/", ["kiln/"]),
    ("formats/", ["kiln/", "formats/"]),
    ("compiler/", ["kiln/", "formats/", "compiler/"]),
    ("backends/common/", ["kiln/", "backends/common/"]),
    ("backends/cpu/", ["kiln/", "backends/common/", "backends/cpu/"]),
    ("backends/vulkan/", ["kiln/", "backends/common/", "backends/vulkan/", "formats/spirv/"]),
    ("backends/sample/", ["kiln/"]),  # a vendor's template, built out of tree against the installed headers
    ("ops/", ["kiln/", "ops/"]),
    # The host engine plugs into the interpreter's engine interface and reads its prepared graph.
    ("ops/xnnpack/", ["kiln/", "ops/", "runtime/host_engine.h", "runtime/interpreter.h", "runtime/arena_planner.h"]),
    ("runtime/device/", ["kiln/", "formats/", "runtime/core.h", "runtime/model/", "runtime/device/",
                         "backends/cpu/cpu_driver.h"]),
    ("runtime/", ["kiln/", "formats/", "runtime/", "backends/cpu/cpu_driver.h"]),
    ("tools/", ["kiln/", "formats/", "runtime/", "ops/", "compiler/", "backends/", "tools/"]),
]
# Single files allowed one more include, with the reason.
EXCEPTIONS = {
    ("runtime/c_api.cc", "ops/builtin_ops.h"): "the top of the runtime hands the builtin op table in",
    ("runtime/c_api.cc", "ops/xnnpack/xnnpack_engine.h"): "and the host engine's factory",
    ("ops/control_flow_ops.cc", "runtime/subgraph_hook.h"):
        "IF, WHILE, CALL_ONCE and the resource variables reach other subgraphs through the runtime's internal hook",
}
# Folders every file may be included from: tests, benchmarks and examples sit above everything.
UNCHECKED = ("tests/", "bench/", "examples/", "build/", ".git/", "third_party/")
# Includes that name Kiln's own folders; anything else quoted is a third-party or generated header.
KILN_ROOTS = ("kiln/", "formats/", "compiler/", "backends/", "ops/", "runtime/", "tools/", "tests/", "bench/",
              "examples/")
SOURCE_SUFFIXES = (".h", ".c", ".cc", ".cpp", ".rs", ".rsh")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
C_STANDARD = {"assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "iso646.h",
              "limits.h", "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h", "stdarg.h", "stdbool.h",
              "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h", "tgmath.h", "time.h", "wchar.h",
              "wctype.h"}


def rule_for(path):
    best = None
    for folder, allowed in RULES:
        if path.startswith(folder) and (best is None or len(folder) > len(best[0])):
            best = (folder, allowed)
    return best


def check(root):
    violations = []
    files = includes = 0
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = [d for d in dirnames if not (rel_dir + d + "/").startswith(UNCHECKED)
                       and not d.startswith(".")]
        for name in sorted(filenames):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            path = rel_dir + name
            rule = rule_for(path)
            if rule is None:
                continue
            folder, allowed = rule
            files += 1
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    bracket, target = m.groups()
                    includes += 1
                    if folder == "include/kiln/" and bracket == "<" and target not in C_STANDARD \
                            and not target.startswith("kiln/"):
                        violations.append(f"{path}:{number}: includes <{target}>: a public header may include "
                                          "only kiln/ headers and the C standard library")
                        continue
                    if bracket == "<" and not target.startswith("kiln/"):
                        continue
                    if "/" not in target:
                        continue  # a file of the including folder
                    if not target.startswith(KILN_ROOTS):
                        continue  # third-party or generated
                    if any(target.startswith(prefix) for prefix in allowed):
                        continue
                    if (path, target) in EXCEPTIONS:
                        continue
                    layer = target.split("/")[0] + "/"
                    violations.append(f"{path}:{number}: includes \"{target}\": {folder} may not include {layer} "
                                      f"(allowed: {', '.join(allowed)})")
    return files, includes, violations


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    files, includes, violations = check(root)
    for v in violations:
        print(v)
    if violations:
        print(f"layer check: {len(violations)} forbidden include(s) in {files} files (docs/architecture.md, Layers)")
        return 1
    if files == 0:
        print(f"layer check: no source files found under {root}")
        return 1
    print(f"layer check: {files} files, {includes} includes, no forbidden direction")
    return 0


if __name__ == "__main__":
    sys.exit(main())
