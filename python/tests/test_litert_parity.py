"""kiln.Interpreter against LiteRT's own Python package (ai-edge-litert), side by side on every shared model.

LiteRT runs in the virtual environment bench/litert_env.sh makes under the build folder (ctest
python_litert_parity sets KILN_LITERT_VENV), through bench/litert_bench.py, which draws seeded inputs and saves
inputs and outputs; kiln.Interpreter then runs the same inputs in this process. Bounds, as
tests/models/litert_compare.py holds the CLI to: float models 1e-4 relative (1e-2 for hybrid models, which LiteRT
runs by quantizing activations on the fly); quantized models byte for byte, Kiln's reference kernels
(OpResolverType.BUILTIN_REF) against LiteRT's reference resolver. Models LiteRT cannot run (custom ops) are left
out, and so are those Kiln refuses before running (the CLI test records both).
"""
import json
import os
import subprocess

import numpy as np
import pytest

import kiln
from conftest import MODELS_DIR, SOURCE_DIR

VENV = os.environ.get("KILN_LITERT_VENV")


@pytest.fixture(scope="module")
def litert_python():
    if not VENV:
        pytest.skip("KILN_LITERT_VENV is not set (ctest python_litert_parity sets it)")
    run = subprocess.run(["bash", os.path.join(SOURCE_DIR, "bench", "litert_env.sh"), VENV, "/usr/bin/python3"],
                         capture_output=True, text=True)
    if run.returncode == 77:
        pytest.skip("LiteRT cannot be installed here: " + run.stderr.strip())
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.strip().splitlines()[-1]


def shared_models():
    if not os.path.isdir(MODELS_DIR):
        return []
    return sorted(f for f in os.listdir(MODELS_DIR) if f.endswith(".tflite"))


@pytest.mark.parametrize("name", shared_models() or ["(no shared models)"])
def test_same_outputs_as_litert(name, litert_python, models_dir, tmp_path):
    path = os.path.join(models_dir, name)
    inputs_dir, outputs_dir = tmp_path / "in", tmp_path / "out"
    probe = subprocess.run([litert_python, os.path.join(SOURCE_DIR, "bench", "litert_bench.py"), path,
                            "--runs", "1", "--warmup", "0", "--seed", "7", "--save-inputs", str(inputs_dir),
                            "--save-outputs", str(outputs_dir)], capture_output=True, text=True)
    if probe.returncode == 3:
        pytest.skip("LiteRT cannot run %s: %s" % (name, probe.stderr.strip().splitlines()[-1:]))
    assert probe.returncode == 0, probe.stdout + probe.stderr
    meta = json.load(open(outputs_dir / "outputs.json"))
    quantized = meta["quantized"]
    if quantized:
        # Byte for byte: LiteRT's reference resolver against Kiln's reference kernels.
        outputs_dir = tmp_path / "ref"
        ref = subprocess.run([litert_python, os.path.join(SOURCE_DIR, "bench", "litert_bench.py"), path,
                              "--runs", "1", "--warmup", "0", "--seed", "7", "--reference-resolver",
                              "--save-outputs", str(outputs_dir)], capture_output=True, text=True)
        assert ref.returncode == 0, ref.stdout + ref.stderr
    inputs = json.load(open(inputs_dir / "inputs.json"))["inputs"]
    resolver = kiln.OpResolverType.BUILTIN_REF if quantized else kiln.OpResolverType.AUTO
    try:
        it = kiln.Interpreter(model_path=path, experimental_op_resolver_type=resolver, num_threads=2)
        it.allocate_tensors()
    except kiln.KilnError as e:
        pytest.skip("Kiln refuses %s before running: %s" % (name, str(e).splitlines()[0]))
    details = it.get_input_details()
    assert len(details) == len(inputs)
    for d, m in zip(details, inputs):
        it.set_tensor(d["index"], np.load(inputs_dir / m["file"]))
    it.invoke()
    for i, d in enumerate(it.get_output_details()):
        got = it.get_tensor(d["index"])
        want = np.load(outputs_dir / ("output_%d.npy" % i))
        assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
        if quantized:
            np.testing.assert_array_equal(got, want, err_msg="%s output %d" % (name, i))
        else:
            rtol = 1e-2 if meta["hybrid"] else 1e-4
            bound = rtol * np.maximum(1.0, np.abs(want.astype(np.float64)))
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            same_nan = np.isnan(got) & np.isnan(want) if got.dtype.kind == "f" else np.zeros(got.shape, bool)
            bad = ~(diff <= bound) & ~same_nan
            assert not bad.any(), "%s output %d: %d of %d elements beyond %g relative, worst %g" % (
                name, i, bad.sum(), bad.size, rtol, np.nanmax(diff))
