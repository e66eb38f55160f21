"""Fixtures of the Python package's tests (run by ctest `python_tests`, which sets the environment below)."""
import os

import pytest

SOURCE_DIR = os.environ.get("KILN_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
MODELS_DIR = os.environ.get("KILN_MODELS_DIR", os.path.join(SOURCE_DIR, "..", "shared", "models"))


def _shared_data_required():
    return os.environ.get("KILN_REQUIRE_SHARED_DATA", "") not in ("", "0")


@pytest.fixture
def source_dir():
    return SOURCE_DIR


@pytest.fixture
def models_dir():
    """The shared real models (../shared/models): skips without them, fails where CI requires them."""
    if not os.path.isdir(MODELS_DIR):
        message = "the shared models folder %s is absent" % MODELS_DIR
        if _shared_data_required():
            pytest.fail(message + " (KILN_REQUIRE_SHARED_DATA)")
        pytest.skip(message)
    return MODELS_DIR


@pytest.fixture
def atan_model(source_dir):
    """examples/atan/atan.tflite: x -> ADD(trained offset) -> custom op Atan -> y. It ships in the repo."""
    return os.path.join(source_dir, "examples", "atan", "atan.tflite")


@pytest.fixture
def atan_source(source_dir):
    return os.path.join(source_dir, "examples", "atan", "atan_op.rs")


def vulkan_device_exists():
    """Whether this machine has a Vulkan device, asked of the Vulkan loader directly (not through Kiln), so that
    GPU tests skip only where there is none and fail where Kiln did not use one that exists."""
    import ctypes

    try:
        vk = ctypes.CDLL("libvulkan.so.1")
    except OSError:
        return False

    class AppInfo(ctypes.Structure):
        _fields_ = [("sType", ctypes.c_int), ("pNext", ctypes.c_void_p), ("pApplicationName", ctypes.c_char_p),
                    ("applicationVersion", ctypes.c_uint32), ("pEngineName", ctypes.c_char_p),
                    ("engineVersion", ctypes.c_uint32), ("apiVersion", ctypes.c_uint32)]

    class InstanceInfo(ctypes.Structure):
        _fields_ = [("sType", ctypes.c_int), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32),
                    ("pApplicationInfo", ctypes.POINTER(AppInfo)), ("enabledLayerCount", ctypes.c_uint32),
                    ("ppEnabledLayerNames", ctypes.c_void_p), ("enabledExtensionCount", ctypes.c_uint32),
                    ("ppEnabledExtensionNames", ctypes.c_void_p)]

    app = AppInfo(0, None, b"kiln-probe", 0, None, 0, (1 << 22) | (1 << 12))  # VK_API_VERSION_1_1
    info = InstanceInfo(1, None, 0, ctypes.pointer(app), 0, None, 0, None)
    instance = ctypes.c_void_p()
    if vk.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(instance)) != 0:
        return False
    count = ctypes.c_uint32(0)
    ok = vk.vkEnumeratePhysicalDevices(instance, ctypes.byref(count), None) == 0 and count.value > 0
    vk.vkDestroyInstance(instance, None)
    return ok


@pytest.fixture
def gpu():
    """"gpu" where a Vulkan device exists (lavapipe counts); skips where none does."""
    if not vulkan_device_exists():
        pytest.skip("no Vulkan device here (lavapipe: apt-get install mesa-vulkan-drivers)")
    return "gpu"
