#!/usr/bin/env python3
"""Proves the layer check can fail: plants forbidden includes in a small tree and expects each to be named by
file and line, and a clean tree to pass."""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")


def tree(files):
    root = tempfile.mkdtemp(prefix="kiln_layers_")
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


def run(root):
    p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


CLEAN = {
    "include/kiln/common.h": "#include <stdint.h>\n",
    "formats/kmod/module.h": '#include "kiln/common.h"\n',
    "compiler/backend.cc": '#include "formats/kmod/module.h"\n#include "llvm/IR/Module.h"\n#include "local.h"\n',
    "runtime/c_api.cc": '#include "ops/builtin_ops.h"\n#include "runtime/core.h"\n',
    "runtime/device/hal_driver.cc": '#include "backends/cpu/cpu_driver.h"\n',
    "backends/vulkan/driver.cc": '#include "formats/spirv/spirv_payload.h"\n#include <vulkan/vulkan.h>\n',
    "tests/anything.cc": '#include "runtime/interpreter.h"\n',
}
PLANTED = {
    "compiler/frontend.cc": ('// comment\n#include "runtime/core.h"\n', "compiler/frontend.cc:2:"),
    "include/kiln/bad.h": ('#include <vector>\n', "include/kiln/bad.h:1:"),
    "include/kiln/worse.h": ('#include "runtime/core.h"\n', "include/kiln/worse.h:1:"),
    "backends/cpu/driver.cc": ('#include "runtime/core.h"\n', "backends/cpu/driver.cc:1:"),
    "ops/conv_ops.cc": ('#include "runtime/interpreter.h"\n', "ops/conv_ops.cc:1:"),
    "runtime/device/kernel_script.cc": ('#include "runtime/interpreter.h"\n', "runtime/device/kernel_script.cc:1:"),
    "runtime/interpreter.cc": ('#include "ops/builtin_ops.h"\n', "runtime/interpreter.cc:1:"),
}


def main():
    failures = []
    code, out = run(tree(CLEAN))
    if code != 0:
        failures.append("a clean tree failed:\n" + out)
    for path, (text, where) in PLANTED.items():
        files = dict(CLEAN)
        files[path] = text
        code, out = run(tree(files))
        if code == 0 or where not in out:
            failures.append(f"planted violation in {path} not caught (exit {code}):\n{out}")
    for f in failures:
        print(f)
    print(f"{len(PLANTED) + 1 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
