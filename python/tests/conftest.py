"""Fixtures of the Python package's tests (run by ctest `python_tests`, which sets the environment below)."""
import os

import pytest

from vulkan_probe import vulkan_device_exists

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


@pytest.fixture
def gpu():
    """"gpu" where a Vulkan device exists (lavapipe counts); skips where none does."""
    if not vulkan_device_exists():
        pytest.skip("no Vulkan device here (lavapipe: apt-get install mesa-vulkan-drivers)")
    return "gpu"
