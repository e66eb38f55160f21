#!/usr/bin/env bash
# `pip install .` as a new user runs it: into a virtual environment (under the build folder), then the README's
# Python example with that environment's Python, and a kernel op with device="gpu", which must find the Vulkan
# driver inside the installed package (kiln/lib/kiln/drivers) when a Vulkan device exists.
#   pip_install_test.sh SOURCE_DIR VENV PYTHON
# Exit 77 (skip) when PyPI is unreachable (pip fetches scikit-build-core, pybind11 and NumPy).
set -euo pipefail
src=$1 venv=$2 python=$3

if ! "$python" - <<'PY'
import sys, urllib.request
try:
    urllib.request.urlopen("https://pypi.org/simple/scikit-build-core/", timeout=15)
except Exception as e:
    print("pip_install_test: PyPI is unreachable (%s); skipped" % e, file=sys.stderr)
    sys.exit(1)
PY
then
  exit 77
fi

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# ccache serves the objects the build already compiled (pyproject.toml builds in build/pip, as the ci preset).
export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1
"$venv/bin/pip" install --quiet --disable-pip-version-check "$src"

cd "$src"   # the README's example names examples/atan/... relative to the checkout
unset PYTHONPATH
"$venv/bin/python" - <<'PY'
import os, re, sys
sys.path.insert(0, os.path.join(os.getcwd(), "python", "tests"))
from vulkan_probe import vulkan_device_exists
import kiln
where = os.path.dirname(kiln.__file__)
assert "site-packages" in where, "kiln was imported from %s, not the installed package" % where
print("installed:", where, kiln.__version__)
readme = open("README.md", encoding="utf-8").read()
for block in re.findall(r"```python\n(.*?)```", readme, re.S):
    exec(block, {})
it = kiln.Interpreter(model_path="examples/atan/atan.tflite", device="gpu",
                      custom_ops={"Atan": kiln.KernelOp("examples/atan/atan_op.rs", "atan_op")})
it.allocate_tensors()
log = "\n".join("  [%s] %s" % (d["kind"], d["message"]) for d in it.explain())
print(log)
if vulkan_device_exists():
    assert "kernel atan_op (<memory>) runs on kiln-vulkan" in log, "a Vulkan device exists, but the installed " \
        "package did not use it:\n" + log
else:
    print("no Vulkan device here: the GPU part is not checked")
PY
ls "$venv"/lib/python3*/site-packages/kiln/lib/kiln/drivers
