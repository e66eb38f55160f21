"""Kiln from Python: run .tflite models with LiteRT's Python API, and RenderScript-style kernels from NumPy.

    import kiln
    interpreter = kiln.Interpreter(model_path="model.tflite")    # as ai_edge_litert.interpreter.Interpreter
    interpreter.allocate_tensors()

    module = kiln.compile("kernel.rs")                            # kilnc as a library
    script = kiln.Context(device="cpu").script(module)
    y = script.foreach("scale", x)

See docs/python.md.
"""
from kiln._kiln import KilnError
from kiln._kiln import version as _version
from kiln.compute import Context, Module, Script, compile, empty, load_module
from kiln.interpreter import Interpreter, KernelOp, OpResolverType, PythonOp, SignatureRunner

__version__ = _version()

__all__ = [
    "Context",
    "Interpreter",
    "KernelOp",
    "KilnError",
    "Module",
    "OpResolverType",
    "PythonOp",
    "Script",
    "SignatureRunner",
    "compile",
    "empty",
    "load_module",
]
