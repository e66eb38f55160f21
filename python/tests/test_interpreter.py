"""kiln.Interpreter: LiteRT's Python API, Kiln's additions (custom ops, devices, explain) and its errors."""
import os

import numpy as np
import pytest

import kiln

LITERT_DETAIL_KEYS = {"name", "index", "shape", "shape_signature", "dtype", "quantization",
                      "quantization_parameters", "sparsity_parameters"}


def run(interpreter, *inputs):
    for d, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(d["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


def hello(models_dir, **kwargs):
    it = kiln.Interpreter(model_path=os.path.join(models_dir, "tm_hello_world_float.tflite"), **kwargs)
    it.allocate_tensors()
    return it


# ---- LiteRT's API ----

def test_details_have_litert_fields(models_dir):
    it = hello(models_dir)
    (i,), (o,) = it.get_input_details(), it.get_output_details()
    assert set(i) == LITERT_DETAIL_KEYS and set(o) == LITERT_DETAIL_KEYS
    assert i["dtype"] is np.float32
    assert i["shape"].dtype == np.int32 and list(i["shape"]) == [1, 1]
    assert i["quantization"] == (0.0, 0)
    assert i["index"] != o["index"]


def test_hello_world_follows_sine(models_dir):
    # The model was trained to follow sin(x) on [0, 2pi] (MANIFEST.md); its own test allows a loose fit.
    it = hello(models_dir)
    for x in np.linspace(0.0, 2 * np.pi, 9, dtype=np.float32):
        (y,) = run(it, np.array([[x]], dtype=np.float32))
        assert abs(float(y[0, 0]) - np.sin(x)) < 0.15, x


def test_model_content_equals_model_path(models_dir):
    path = os.path.join(models_dir, "mt_kws_dscnn_float.tflite")
    with open(path, "rb") as f:
        content = f.read()
    a = kiln.Interpreter(model_path=path)
    b = kiln.Interpreter(model_content=content)
    a.allocate_tensors()
    b.allocate_tensors()
    x = np.random.default_rng(1).uniform(-1, 1, a.get_input_details()[0]["shape"]).astype(np.float32)
    np.testing.assert_array_equal(run(a, x)[0], run(b, x)[0])


def test_threads_and_reference_kernels_agree(models_dir):
    path = os.path.join(models_dir, "mt_kws_dscnn_float.tflite")
    x = np.random.default_rng(2).uniform(-1, 1, (1, 49, 10, 1)).astype(np.float32)
    results = []
    for kwargs in ({"num_threads": 1}, {"num_threads": 2},
                   {"experimental_op_resolver_type": kiln.OpResolverType.BUILTIN_REF}):
        it = kiln.Interpreter(model_path=path, **kwargs)
        it.allocate_tensors()
        results.append(run(it, x)[0])
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_allclose(results[0], results[2], rtol=1e-4, atol=1e-5)


def test_quantized_details_and_reference(models_dir):
    path = os.path.join(models_dir, "mt_kws_dscnn_int8.tflite")
    it = kiln.Interpreter(model_path=path, experimental_op_resolver_type=kiln.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    (i,) = it.get_input_details()
    assert i["dtype"] is np.int8
    scale, zero_point = i["quantization"]
    assert scale > 0 and -128 <= zero_point <= 127
    q = i["quantization_parameters"]
    assert q["scales"].tolist() == [np.float32(scale)] and q["zero_points"].tolist() == [zero_point]
    x = np.random.default_rng(3).integers(-128, 128, i["shape"], dtype=np.int8)
    fast = kiln.Interpreter(model_path=path)
    fast.allocate_tensors()
    ref_out, fast_out = run(it, x)[0], run(fast, x)[0]
    assert ref_out.dtype == np.int8
    # The fast path (XNNPACK) is held to 1 step of the reference kernels on this model (docs/ops.md).
    assert np.max(np.abs(ref_out.astype(int) - fast_out.astype(int))) <= 1


def test_tensor_is_a_view(atan_model):
    it = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": np.arctan})
    it.allocate_tensors()
    (i,), (o,) = it.get_input_details(), it.get_output_details()
    view = it.tensor(i["index"])
    view()[:] = [0.5]
    assert np.shares_memory(view(), it.tensor(i["index"])())
    it.invoke()
    y = it.tensor(o["index"])()
    assert y.shape == (1,)
    # get_tensor copies: the copy does not change when the model runs again.
    before = it.get_tensor(o["index"])
    view()[:] = [-0.5]
    it.invoke()
    assert before[0] != it.get_tensor(o["index"])[0] == y[0]


def test_resize_tensor_input(atan_model):
    it = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": np.arctan})
    (i,) = it.get_input_details()
    it.resize_tensor_input(i["index"], [5])
    it.allocate_tensors()
    assert list(it.get_input_details()[0]["shape"]) == [5]
    x = np.linspace(-2, 2, 5, dtype=np.float32)
    (y,) = run(it, x)
    assert y.shape == (5,)
    # Monotonic, as atan(x + offset) is.
    assert np.all(np.diff(y) > 0)
    with pytest.raises(ValueError, match="strict"):
        it.resize_tensor_input(i["index"], [7], strict=True)


def test_signature_runner(models_dir):
    it = kiln.Interpreter(model_path=os.path.join(models_dir, "tm_simple_add.tflite"))
    assert it.get_signature_list() == {"serving_default": {"inputs": ["input_1", "input_2"], "outputs": ["add"]}}
    runner = it.get_signature_runner()
    assert set(runner.get_input_details()) == {"input_1", "input_2"}
    shape = tuple(runner.get_input_details()["input_1"]["shape"])
    dtype = runner.get_input_details()["input_1"]["dtype"]
    rng = np.random.default_rng(8)
    a = rng.integers(-50, 50, shape).astype(dtype)
    b = rng.integers(-50, 50, shape).astype(dtype)
    out = runner(input_1=a, input_2=b)
    assert set(out) == {"add"} and out["add"].shape == shape
    # The same through LiteRT's index API.
    (i1, i2), (o,) = it.get_input_details(), it.get_output_details()
    it.set_tensor(runner.get_input_details()["input_1"]["index"], a)
    it.set_tensor(runner.get_input_details()["input_2"]["index"], b)
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(o["index"]), out["add"])
    with pytest.raises(ValueError, match="takes inputs"):
        runner(input_1=a)
    with pytest.raises(ValueError, match="not found"):
        it.get_signature_runner("train")
    # Several inputs and outputs, by name.
    multi = kiln.Interpreter(model_path=os.path.join(models_dir, "lr_multi_add.tflite"))
    sig = multi.get_signature_list()["serving_default"]
    assert sig == {"inputs": ["a", "b", "c", "d"], "outputs": ["x", "y"]}
    runner = multi.get_signature_runner("serving_default")
    args = {n: np.full(tuple(d["shape"]), k + 1, d["dtype"]) for k, (n, d) in
            enumerate(sorted(runner.get_input_details().items()))}
    out = runner(**args)
    assert set(out) == {"x", "y"}
    # a + b + c and b + c + d (the model's LiteRT test: x = a + b + c, y = b + c + d) in some order.
    assert sorted(float(v.reshape(-1)[0]) for v in out.values()) == [6.0, 9.0]


def test_models_without_signatures(atan_model):
    it = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": np.arctan})
    assert it.get_signature_list() == {}
    with pytest.raises(ValueError, match="no Signature Def"):
        it.get_signature_runner()


# ---- errors ----

def test_set_tensor_checks_dtype_and_shape(models_dir):
    it = hello(models_dir)
    index = it.get_input_details()[0]["index"]
    with pytest.raises(ValueError, match="Got value of type FLOAT64 but expected type FLOAT32"):
        it.set_tensor(index, np.array([[1.0]]))
    with pytest.raises(ValueError, match="Dimension mismatch. Got 2 but expected 1 for dimension 1"):
        it.set_tensor(index, np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match="Dimension count mismatch"):
        it.set_tensor(index, np.zeros((1,), np.float32))
    with pytest.raises(ValueError, match="not an input"):
        it.set_tensor(12345, np.zeros((1, 1), np.float32))
    with pytest.raises(ValueError, match="neither an input nor an output"):
        it.get_tensor(12345)


def test_invoke_before_allocate(models_dir):
    it = kiln.Interpreter(model_path=os.path.join(models_dir, "tm_hello_world_float.tflite"))
    with pytest.raises(RuntimeError, match="allocate_tensors"):
        it.invoke()
    with pytest.raises(ValueError, match="allocate_tensors"):
        it.get_tensor(it.get_input_details()[0]["index"])


def test_broken_and_missing_models(tmp_path):
    with pytest.raises(kiln.KilnError, match="could not load the model from model_content"):
        kiln.Interpreter(model_content=b"not a flatbuffer at all, just some bytes")
    missing = str(tmp_path / "missing.tflite")
    with pytest.raises(kiln.KilnError, match="missing.tflite"):
        kiln.Interpreter(model_path=missing)
    with pytest.raises(ValueError, match="exactly one"):
        kiln.Interpreter()
    with pytest.raises(ValueError, match="device must be"):
        kiln.Interpreter(model_content=b"x" * 64, device="tpu")


def test_repro_inputs_raise_not_crash(source_dir):
    """Every model in ../shared/repro that once broke Kiln raises KilnError or runs; none crashes Python."""
    repro = os.environ.get("KILN_REPRO_DIR", os.path.join(source_dir, "..", "shared", "repro"))
    if not os.path.isdir(repro):
        pytest.skip("the shared repro folder %s is absent" % repro)
    models = sorted(f for f in os.listdir(repro) if f.endswith(".tflite"))
    assert models, "no .tflite in %s" % repro
    for name in models:
        try:
            it = kiln.Interpreter(model_path=os.path.join(repro, name))
            it.allocate_tensors()
        except (kiln.KilnError, RuntimeError) as e:
            assert str(e), name


def test_unresolved_custom_op(atan_model):
    it = kiln.Interpreter(model_path=atan_model)
    with pytest.raises(kiln.KilnError, match="Atan"):
        it.allocate_tensors()


# ---- custom ops ----

def test_kernel_op_equals_numpy(atan_model, atan_source):
    seen = []

    def atan_numpy(x):
        seen.append(x)
        return np.arctan(x)

    x = np.linspace(-3, 3, 64, dtype=np.float32)
    numpy_op = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": atan_numpy})
    kernel_op = kiln.Interpreter(model_path=atan_model,
                                 custom_ops={"Atan": kiln.KernelOp(kiln.compile(atan_source), "atan_op")},
                                 device="cpu")
    for it in (numpy_op, kernel_op):
        it.resize_tensor_input(it.get_input_details()[0]["index"], x.shape)
        it.allocate_tensors()
    want = run(numpy_op, x)[0]
    got = run(kernel_op, x)[0]
    # The Atan op's input is x + the model's trained offset (the builtin ADD before it).
    np.testing.assert_allclose(want, np.arctan(seen[0]), rtol=1e-6)
    assert not np.allclose(seen[0], x), "the ADD before Atan should shift x"
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    assert any(d["kind"] == "kernel" for d in kernel_op.explain())


def test_kernel_op_from_paths(tmp_path, atan_model, atan_source):
    module = kiln.compile(atan_source)
    kmod = str(tmp_path / "atan.kmod")
    module.save(kmod)
    for source in (kmod, atan_source):
        it = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": kiln.KernelOp(source, "atan_op")})
        it.allocate_tensors()
        assert run(it, np.array([0.25], np.float32))[0].shape == (1,)
    with pytest.raises(ValueError, match="no kernel 'atan'"):
        kiln.KernelOp(module, "atan")
    broken = tmp_path / "broken.kmod"
    broken.write_bytes(module.to_bytes()[:100])
    with pytest.raises(kiln.KilnError, match="not a valid kernel module"):
        kiln.KernelOp(str(broken), "atan_op")


def test_kernel_op_on_gpu(gpu, atan_model, atan_source):
    module = kiln.compile(atan_source)
    x = np.linspace(-3, 3, 1000, dtype=np.float32)
    outputs = []
    for device in ("cpu", gpu):
        it = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": kiln.KernelOp(module, "atan_op")},
                              device=device)
        it.resize_tensor_input(0, x.shape)
        it.allocate_tensors()
        outputs.append(run(it, x)[0])
        log = it.explain()
        assert all(set(d) == {"kind", "subject", "message"} for d in log)
        on_device = [d for d in log if d["kind"] == "kernel" and "vulkan" in d["message"].lower()]
        assert bool(on_device) == (device == gpu), log
    # docs/compute-api.md: atan on a Vulkan device within 4 ulp-ish of the CPU driver's.
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-5, atol=1e-6)


def test_python_op_output_shapes(atan_model):
    # A custom rule: the op's output is x's first two elements (sliced), sized in Prepare.
    op = kiln.PythonOp(lambda x: x[:2] * 2, output_shapes=lambda shape: (2,))
    it = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": op})
    it.resize_tensor_input(0, [4])
    it.allocate_tensors()
    assert list(it.get_output_details()[0]["shape"]) == [2]
    (y,) = run(it, np.zeros(4, np.float32))
    assert y.shape == (2,) and y[0] == y[1]
    bad = kiln.PythonOp(np.arctan, output_shapes=lambda shape: [(1,), (1,)])
    it = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": bad})
    with pytest.raises(kiln.KilnError, match="the output shapes name 2 output"):
        it.allocate_tensors()


def test_python_op_errors(atan_model):
    it = kiln.Interpreter(model_path=atan_model,
                          custom_ops={"Atan": kiln.PythonOp(lambda x: np.zeros(3, np.float32),
                                                            output_shapes=lambda s: s)})
    it.allocate_tensors()
    it.set_tensor(0, np.array([1.0], np.float32))
    with pytest.raises(kiln.KilnError, match=r"output 0 has shape \(3,\); the model declares \(1,\)"):
        it.invoke()

    def boom(x):
        raise ZeroDivisionError("the op failed on purpose")

    it = kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": boom})
    it.allocate_tensors()
    with pytest.raises(kiln.KilnError, match="ZeroDivisionError: the op failed on purpose"):
        it.invoke()
    with pytest.raises(TypeError, match="a kiln.PythonOp or a callable"):
        kiln.Interpreter(model_path=atan_model, custom_ops={"Atan": 3})


def test_missing_driver(atan_model, tmp_path):
    with pytest.raises(kiln.KilnError) as e:
        kiln.Interpreter(model_path=atan_model, device="gpu-only", driver_path=str(tmp_path / "no-such-driver.so"))
    assert "no-such-driver.so" in str(e.value)


def test_profile_and_nodes(models_dir):
    it = hello(models_dir, profiling=True)
    run(it, np.array([[0.5]], np.float32))
    events = it.profile()
    assert events and all(e["duration_ns"] >= 0 for e in events)
    assert [n["op"] for n in it.nodes()] == ["FULLY_CONNECTED"] * 3


def test_signature_runner_on_another_subgraph(source_dir, tmp_path):
    """A signature over subgraph 1 runs that subgraph (KilnSignatureRunner), beside one over subgraph 0."""
    import json
    import shutil
    import subprocess
    flatc = shutil.which("flatc")
    if flatc is None:
        pytest.skip("flatc is not installed")

    def reshape_graph(in_shape, out_shape, in_name, out_name):
        return {"tensors": [{"type": "FLOAT32", "buffer": 0, "shape": in_shape, "name": in_name},
                            {"type": "FLOAT32", "buffer": 0, "shape": out_shape, "name": out_name}],
                "inputs": [0], "outputs": [1],
                "operators": [{"opcode_index": 0, "inputs": [0], "outputs": [1],
                               "builtin_options_type": "ReshapeOptions", "builtin_options": {"new_shape": out_shape}}]}
    model = {"version": 3,
             "operator_codes": [{"deprecated_builtin_code": 22, "builtin_code": "RESHAPE", "version": 1}],
             "subgraphs": [reshape_graph([2, 3], [6], "x", "y"), reshape_graph([6], [3, 2], "a", "b")],
             "buffers": [{}],
             "signature_defs": [
                 {"signature_key": "flat", "subgraph_index": 0, "inputs": [{"name": "grid", "tensor_index": 0}],
                  "outputs": [{"name": "row", "tensor_index": 1}]},
                 {"signature_key": "unflat", "subgraph_index": 1, "inputs": [{"name": "row_in", "tensor_index": 0}],
                  "outputs": [{"name": "pairs", "tensor_index": 1}]}]}
    (tmp_path / "two.json").write_text(json.dumps(model))
    subprocess.run([flatc, "-b", "-o", str(tmp_path), os.path.join(source_dir, "runtime", "model", "tflite.fbs"),
                    str(tmp_path / "two.json")], check=True)
    it = kiln.Interpreter(model_path=str(tmp_path / "two.tflite"))
    assert it.get_signature_list() == {"flat": {"inputs": ["grid"], "outputs": ["row"]},
                                       "unflat": {"inputs": ["row_in"], "outputs": ["pairs"]}}
    unflat = it.get_signature_runner("unflat")
    details = unflat.get_input_details()["row_in"]
    assert list(details["shape"]) == [6] and details["dtype"] == np.float32
    x = np.arange(6, dtype=np.float32)
    out = unflat(row_in=x)
    assert set(out) == {"pairs"}
    np.testing.assert_array_equal(out["pairs"], x.reshape(3, 2))
    flat = it.get_signature_runner("flat")
    np.testing.assert_array_equal(flat(grid=x.reshape(2, 3))["row"], x)
    with pytest.raises(ValueError, match="takes inputs"):
        unflat(grid=x)
    with pytest.raises(ValueError, match="input 'row_in' is float32"):
        unflat(row_in=x.astype(np.int32))
