"""Kiln's compute API from NumPy: kiln.compile, Context, Script globals, foreach, reduce, invoke, bind."""
import numpy as np
import pytest

import kiln

SOURCE = r"""
#pragma version(1)
#pragma rs java_package_name(com.kiln.python)

typedef struct Tone {
  float gain;
  int offset;
  uchar4 tint;
  float3 weights;
} Tone;

float gGain = 2.0f;
int gTable[4] = {1, 2, 3, 4};
Tone gTone = {1.5f, -5, {10, 20, 30, 40}, {0.5f, 0.25f, 0.125f}};
const float kScale = 0.5f;
int gCalls = 0;
rs_allocation gLut;

float RS_KERNEL scale(float in) { return in * gGain; }

float RS_KERNEL madd(float a, float b) { return a * gGain + b; }

int RS_KERNEL table(int in, uint32_t x) { return in + gTable[x % 4u]; }

float4 RS_KERNEL tone(uchar4 in) {
  const float3 rgb = convert_float3(in.rgb + gTone.tint.rgb);
  return (float4){rgb.r * gTone.weights.x, rgb.g * gTone.weights.y, rgb.b * gTone.weights.z,
                  (float)(in.a + gTone.offset) * gTone.gain};
}

float RS_KERNEL lookup(int index) { return rsGetElementAt_float(gLut, index); }

void count(int times, float gain) {
  gCalls += times;
  gGain = gain;
}

#pragma rs reduce(sum_int) accumulator(sumAccum) combiner(sumCombine)
static void sumAccum(long* accum, int value) { *accum += value; }
static void sumCombine(long* accum, const long* other) { *accum += *other; }

typedef struct MeanAccum { double sum; long count; } MeanAccum;
#pragma rs reduce(mean) accumulator(meanAccum) combiner(meanCombine) outconverter(meanOut)
static void meanAccum(MeanAccum* accum, float value) { accum->sum += value; accum->count += 1; }
static void meanCombine(MeanAccum* accum, const MeanAccum* other) {
  accum->sum += other->sum;
  accum->count += other->count;
}
static void meanOut(float* result, const MeanAccum* accum) {
  *result = accum->count ? (float)(accum->sum / (double)accum->count) : 0.0f;
}
"""


@pytest.fixture(scope="module")
def module():
    return kiln.compile(SOURCE)


@pytest.fixture
def script(module):
    return kiln.Context(device="cpu").script(module)


def test_reflection(module):
    assert module.kernels == ["scale", "madd", "table", "tone", "lookup"]
    assert set(module.globals) >= {"gGain", "gTable", "gTone", "kScale", "gLut"}
    assert module.invokables == ["count"]
    assert module.reductions == ["sum_int", "mean"]
    assert "llvm-bc" in module.reflection["payloads"]


def test_globals(script):
    assert script.gGain == np.float32(2.0)
    script.gGain = 3.5
    assert script.get("gGain") == np.float32(3.5)
    np.testing.assert_array_equal(script.gTable, [1, 2, 3, 4])
    script.set("gTable", [5, 6, 7, 8])
    np.testing.assert_array_equal(script.gTable, [5, 6, 7, 8])
    tone = script.gTone
    assert tone["offset"] == -5 and tone["tint"].tolist() == [10, 20, 30, 40]
    np.testing.assert_array_equal(tone["weights"], np.float32([0.5, 0.25, 0.125]))
    script.gTone = {"gain": 2.0, "weights": [1, 1, 1]}  # a whole new value: fields not named are zero
    assert script.gTone["gain"] == 2.0 and script.gTone["offset"] == 0
    assert script.kScale == np.float32(0.5)


def test_global_errors(script):
    with pytest.raises(AttributeError, match="const"):
        script.kScale = 1.0
    with pytest.raises(AttributeError, match="no global 'gMissing'"):
        script.gMissing = 1.0
    with pytest.raises(ValueError, match="expected 4 values"):
        script.gTable = [1, 2, 3]
    with pytest.raises(TypeError, match="not an integer"):
        script.gCalls = 1.5
    with pytest.raises(TypeError, match="bind an array"):
        script.gLut = 3
    with pytest.raises(KeyError, match="no field"):
        script.gTone = {"volume": 1}


def test_foreach(script):
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(script.foreach("scale", x), x * 2)
    out = np.zeros_like(x)
    assert script.foreach("scale", x, out=out) is out
    np.testing.assert_array_equal(out, x * 2)
    # Broadcasting, NumPy's rules: [3, 1] with [4] runs over [3, 4].
    a = np.arange(3, dtype=np.float32).reshape(3, 1)
    b = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(script.foreach("madd", a, b), a * 2 + b)
    # x coordinates and an array global.
    ints = np.zeros(8, np.int32)
    np.testing.assert_array_equal(script.foreach("table", ints), [1, 2, 3, 4, 1, 2, 3, 4])
    # A launch limited to x in [2, 5).
    out = np.full(10, -1, np.float32)
    script.foreach("scale", x, out=out, limits=(2, 5, 0, 0, 0, 0))
    np.testing.assert_array_equal(out, [-1, -1, 4, 6, 8, -1, -1, -1, -1, -1])


def test_vector_kernel(script):
    pixels = np.random.default_rng(4).integers(0, 200, (6, 5, 4), dtype=np.uint8)
    got = script.foreach("tone", pixels)
    assert got.shape == (6, 5, 4) and got.dtype == np.float32
    rgb = (pixels[..., :3].astype(np.uint8) + np.uint8([10, 20, 30])).astype(np.float32)
    want = np.concatenate([rgb * np.float32([0.5, 0.25, 0.125]),
                           ((pixels[..., 3:].astype(np.float32) - 5) * 1.5)], axis=-1)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_foreach_errors(script):
    with pytest.raises(TypeError, match="input 0 is float"):
        script.foreach("scale", np.arange(4, dtype=np.float64))
    with pytest.raises(TypeError, match="takes 1 input"):
        script.foreach("scale", np.zeros(4, np.float32), np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="innermost dimension must be 4"):
        script.foreach("tone", np.zeros((4, 3), np.uint8))
    with pytest.raises(KeyError, match="no kernel 'nope'"):
        script.foreach("nope", np.zeros(4, np.float32))
    with pytest.raises(kiln.KilnError, match="foreach 'madd' failed"):
        script.foreach("madd", np.zeros(3, np.float32), np.zeros(4, np.float32), out=np.zeros(3, np.float32))


def test_invoke_and_reduce(script):
    script.invoke("count", 3, 0.25)
    script.invoke("count", 4, 0.5)
    assert script.gCalls == 7 and script.gGain == np.float32(0.5)
    with pytest.raises(TypeError, match="takes 2 argument"):
        script.invoke("count", 1)
    ints = np.arange(-100, 1000, dtype=np.int32)
    assert script.reduce("sum_int", ints) == ints.sum()
    floats = np.random.default_rng(5).uniform(0, 1, 10000).astype(np.float32)
    assert abs(script.reduce("mean", floats) - floats.mean()) < 1e-5


def test_bound_allocation_in_place(script):
    # An aligned array (kiln.empty) is used in place: a write by NumPy after binding is seen by the kernel.
    lut = kiln.empty(16, np.float32)
    lut[:] = np.arange(16)
    script.bind("gLut", lut)
    idx = np.array([3, 0, 15], np.int32)
    np.testing.assert_array_equal(script.foreach("lookup", idx), [3, 0, 15])
    lut[3] = 42
    np.testing.assert_array_equal(script.foreach("lookup", idx), [42, 0, 15])
    # An unaligned array is copied when bound: later NumPy writes are not seen.
    raw = np.zeros(17, np.float32)
    unaligned = raw[1:] if raw[1:].ctypes.data % 64 else raw[:16]
    unaligned[:] = np.arange(16)
    if unaligned.ctypes.data % 64 != 0:
        script.bind("gLut", unaligned)
        unaligned[3] = 42
        np.testing.assert_array_equal(script.foreach("lookup", idx), [3, 0, 15])
    script.bind("gLut", None)
    # An unbound rs_allocation read fails the launch (it does not name the global yet: issue #12).
    with pytest.raises(kiln.KilnError, match="NULL allocation"):
        script.foreach("lookup", idx)


def test_compile_errors(tmp_path):
    with pytest.raises(kiln.KilnError, match=r"broken.rs:3:\d+: error"):
        kiln.compile("#pragma version(1)\n#pragma rs java_package_name(x)\nfloat RS_KERNEL k(float in) { return in + ; }\n",
                     filename="broken.rs")
    path = tmp_path / "k.rs"
    path.write_text("#pragma version(1)\n#pragma rs java_package_name(x)\nfloat RS_KERNEL k(float in) { return -in; }\n")
    m = kiln.compile(str(path))
    assert m.kernels == ["k"]
    with pytest.raises(kiln.KilnError, match="not a valid kernel module"):
        kiln.Module(b"KMOD" + b"\0" * 60)


def test_context_errors(tmp_path):
    with pytest.raises(ValueError, match="device must be"):
        kiln.Context(device="tpu")
    with pytest.raises(kiln.KilnError, match="no-such-driver.so"):
        kiln.Context(device="gpu-only", driver_path=str(tmp_path / "no-such-driver.so"))


def test_gpu_equals_cpu(gpu, module):
    x = np.random.default_rng(6).uniform(-10, 10, 4096).astype(np.float32)
    pixels = np.random.default_rng(7).integers(0, 200, (32, 32, 4), dtype=np.uint8)
    results = {}
    for device in ("cpu", gpu):
        ctx = kiln.Context(device=device)
        s = ctx.script(module)
        s.gGain = 1.25
        results[device] = (s.foreach("scale", x), s.foreach("tone", pixels), s.reduce("sum_int", x.astype(np.int32)))
        if device == gpu:
            assert any("vulkan" in d["message"].lower() for d in ctx.explain() if d["kind"] == "kernel"), ctx.explain()
    for a, b in zip(results["cpu"], results[gpu]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
