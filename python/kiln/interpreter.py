"""kiln.Interpreter: LiteRT's Python Interpreter API over Kiln's runtime.

A script written for ``ai_edge_litert.interpreter.Interpreter`` (or ``tflite_runtime.interpreter.Interpreter``)
ports by changing the import. Tensor indices are the model's tensor indices, as in LiteRT (the ``index`` field of
``get_input_details()``); Kiln exposes the model's inputs and outputs (LiteRT's intermediate tensors need its
``experimental_preserve_all_tensors``, which Kiln does not offer).
"""
import enum
import os

import numpy as np

from kiln import _kiln
from kiln.compute import Module, load_module


class OpResolverType(enum.Enum):
    """LiteRT's op resolver choices. ``BUILTIN_REF`` runs every builtin op on Kiln's reference kernels (bit-exact
    with LiteRT's reference kernels); the others use Kiln's fast path (XNNPACK) where it supports the node."""

    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


class KernelOp:
    """A custom op served by a kernel of a compiled module (kilnc): runs on the CPU or a GPU driver.

    ``module`` is a :class:`kiln.Module`, the path of a ``.kmod`` file, or the path of an RS source
    (``.rs``, compiled on the spot). ``input_globals`` maps node inputs to rs_allocation or pointer globals
    (``{1: "gWeights"}``) instead of kernel inputs. ``options_as_globals`` False leaves the op's custom options
    alone instead of setting the globals of the same names.
    """

    def __init__(self, module, kernel, input_globals=None, options_as_globals=True):
        if isinstance(module, (str, os.PathLike)):
            path = os.fspath(module)
            module = load_module(path) if not path.endswith(".rs") else _compile_path(path)
        if not isinstance(module, Module):
            raise TypeError("KernelOp: module must be a kiln.Module or a path, not %s" % type(module).__name__)
        names = [k["name"] for k in module.reflection["kernels"]]
        if kernel not in names:
            raise ValueError("KernelOp: the module has no kernel '%s'; it has %s" % (kernel, ", ".join(names) or "none"))
        self.module = module
        self.kernel = kernel
        self.input_globals = dict(input_globals or {})
        self.options_as_globals = bool(options_as_globals)

    def _entry(self, name):
        return (name, "kernel", self.module._module, self.kernel, self.input_globals, self.options_as_globals)


class PythonOp:
    """A custom op served by a Python function, for quick experiments: ``fn(*inputs)`` gets NumPy copies of the
    node's inputs and returns its output (or a tuple of outputs), cast to the output's type as NumPy's
    ``same_kind`` casting allows. The outputs take the broadcast shape of the inputs (as kernel ops do) unless
    ``output_shapes(*input_shapes)`` returns a shape, or a list of one per output. A plain callable in
    ``custom_ops`` is a PythonOp with the default shapes."""

    def __init__(self, fn, output_shapes=None):
        if not callable(fn) or (output_shapes is not None and not callable(output_shapes)):
            raise TypeError("PythonOp: fn and output_shapes must be callables")
        self.fn = fn
        self.output_shapes = output_shapes

    def _entry(self, name):
        return (name, "python", self.fn, self.output_shapes)


def _compile_path(path):
    from kiln.compute import compile as kiln_compile

    return kiln_compile(path)


class Interpreter:
    """Loads a .tflite model and runs it (LiteRT's ``Interpreter``, plus Kiln's additions).

    LiteRT's arguments: ``model_path`` or ``model_content`` (bytes), ``num_threads`` (None: one per core),
    ``experimental_op_resolver_type`` (:class:`OpResolverType`). ``experimental_delegates`` must be empty: Kiln
    places work on devices itself (``device``).

    Kiln's: ``custom_ops`` maps custom op names to a :class:`KernelOp`, a :class:`PythonOp` or a Python callable
    ``fn(*inputs) -> output or tuple of outputs`` (NumPy arrays, see PythonOp); ``device`` is ``"auto"``, ``"cpu"``, ``"gpu"`` (a driver device when one loads, else the CPU) or
    ``"gpu-only"`` (fail without one); ``driver_path`` a driver file or directory; ``profiling`` records per-node
    times of each invoke (:meth:`profile`).
    """

    def __init__(self, model_path=None, model_content=None, experimental_delegates=None, num_threads=None,
                 experimental_op_resolver_type=OpResolverType.AUTO, experimental_preserve_all_tensors=False,
                 custom_ops=None, device="auto", driver_path=None, profiling=False, **unsupported):
        if unsupported:
            raise TypeError("Interpreter: unsupported argument(s) %s" % ", ".join(sorted(unsupported)))
        if (model_path is None) == (model_content is None):
            raise ValueError("Interpreter: pass exactly one of model_path and model_content")
        if experimental_delegates:
            raise ValueError("Interpreter: Kiln takes no LiteRT delegates; choose devices with device=")
        if experimental_preserve_all_tensors:
            raise ValueError("Interpreter: experimental_preserve_all_tensors is not supported; Kiln exposes the "
                             "model's inputs and outputs")
        if num_threads is None:
            num_threads = -1
        elif not isinstance(num_threads, int) or (num_threads < 1 and num_threads != -1):
            raise ValueError("Interpreter: num_threads must be a positive int, -1 or None, not %r" % (num_threads,))
        entries = []
        for name, op in (custom_ops or {}).items():
            if isinstance(op, (KernelOp, PythonOp)):
                entries.append(op._entry(name))
            elif callable(op):
                entries.append(PythonOp(op)._entry(name))
            else:
                raise TypeError("custom_ops['%s'] must be a kiln.KernelOp, a kiln.PythonOp or a callable, not %s"
                                % (name, type(op).__name__))
        reference = experimental_op_resolver_type == OpResolverType.BUILTIN_REF
        path = os.fspath(model_path) if model_path is not None else ""
        content = bytes(model_content) if model_content is not None else None
        self._impl = _kiln.Interpreter(content, path, num_threads, device, os.fspath(driver_path or ""), reference,
                                       bool(profiling), entries)
        self._allocated = False
        self._inputs = {self._impl.input_tensor_index(i): i for i in range(self._impl.input_count())}
        self._outputs = {self._impl.output_tensor_index(i): i for i in range(self._impl.output_count())}

    # ---- LiteRT's API ----

    def allocate_tensors(self):
        self._impl.allocate()
        self._allocated = True

    def invoke(self):
        if not self._allocated:
            raise RuntimeError("Invoke called on model that is not ready: call allocate_tensors() first")
        self._impl.invoke()

    def get_input_details(self):
        return [self._details(False, i) for i in range(self._impl.input_count())]

    def get_output_details(self):
        return [self._details(True, i) for i in range(self._impl.output_count())]

    def get_tensor_details(self):
        return self.get_input_details() + self.get_output_details()

    def set_tensor(self, tensor_index, value):
        i = self._input_position(tensor_index)
        view = self._view(False, i)
        value = np.asarray(value)
        if value.dtype != view.dtype:
            raise ValueError("Cannot set tensor: Got value of type %s but expected type %s for input %d, name: %s"
                             % (value.dtype.name.upper(), view.dtype.name.upper(), tensor_index,
                                self._details(False, i)["name"]))
        if value.shape != view.shape:
            if value.ndim != view.ndim:
                raise ValueError("Cannot set tensor: Dimension count mismatch. Got %d but expected %d for input %d."
                                 % (value.ndim, view.ndim, tensor_index))
            d = next(k for k in range(value.ndim) if value.shape[k] != view.shape[k])
            raise ValueError("Cannot set tensor: Dimension mismatch. Got %d but expected %d for dimension %d of "
                             "input %d." % (value.shape[d], view.shape[d], d, tensor_index))
        np.copyto(view, value)

    def get_tensor(self, tensor_index):
        kind, i = self._locate(tensor_index)
        return self._view(kind, i).copy()

    def tensor(self, tensor_index):
        """A function returning a NumPy view of the tensor's memory (no copy), as LiteRT's. The view is valid
        until the next allocate_tensors() or resize; do not keep it across them."""
        kind, i = self._locate(tensor_index)
        return lambda: self._view(kind, i)

    def resize_tensor_input(self, input_index, tensor_size, strict=False):
        i = self._input_position(input_index)
        dims = [int(d) for d in np.asarray(tensor_size).reshape(-1)]
        if strict:
            current = list(self._details(False, i)["shape"])
            if len(dims) != len(current) or any(a != b for a, b in zip(dims, current)):
                raise ValueError("resize_tensor_input(strict=True): the model's shape %s has no unknown dimensions "
                                 "to resize to %s" % (current, dims))
        self._impl.resize(i, dims)
        self._allocated = False

    def get_signature_list(self):
        """The model's signatures: {key: {"inputs": [names], "outputs": [names]}}, as LiteRT's."""
        return {s["key"]: {"inputs": [n for n, _ in s["inputs"]], "outputs": [n for n, _ in s["outputs"]]}
                for s in self._impl.signatures()}

    def get_signature_runner(self, signature_key=None):
        """A :class:`SignatureRunner` for `signature_key` (the only signature when None), as LiteRT's."""
        signatures = self._impl.signatures()
        if not signatures:
            raise ValueError("SignatureDef signature_key is None and model has no Signature Def")
        if signature_key is None:
            if len(signatures) != 1:
                raise ValueError("SignatureDef signature_key is None and model has %d Signature Defs; name one of "
                                 "%s" % (len(signatures), [s["key"] for s in signatures]))
            signature = signatures[0]
        else:
            matches = [s for s in signatures if s["key"] == signature_key]
            if not matches:
                raise ValueError("SignatureDef signature_key '%s' not found; the model has %s"
                                 % (signature_key, [s["key"] for s in signatures]))
            signature = matches[0]
        if signature["subgraph"] != 0:
            return _SubgraphSignatureRunner(self, signature)
        return SignatureRunner(self, signature)

    # ---- Kiln's additions ----

    def explain(self):
        """The decision log: where each node and kernel runs and why, drivers found, loaded or refused, as a list
        of dicts with ``kind``, ``subject`` and ``message`` (what ``kiln run --explain`` prints)."""
        return self._impl.decisions()

    def profile(self):
        """Per-node events of the last invoke (with ``profiling=True``): op, engine, start_ns, duration_ns."""
        return self._impl.profile()

    def nodes(self):
        """The model's nodes: index, op name (the custom name for custom ops), custom, version."""
        return self._impl.nodes()

    # ---- helpers ----

    def _details(self, output, i):
        d = self._impl.details(output, i)
        if isinstance(d["dtype"], np.dtype):
            d["dtype"] = d["dtype"].type  # LiteRT gives the scalar type (numpy.float32)
        d["shape_signature"] = d["shape"].copy()
        d["sparsity_parameters"] = {}
        return d

    def _view(self, output, i):
        if not self._allocated:
            raise ValueError("Tensor data is null. Run allocate_tensors() first")
        return self._impl.view(output, i)

    def _input_position(self, tensor_index):
        if tensor_index not in self._inputs:
            raise ValueError("Tensor %r is not an input of the model; its inputs are tensors %s"
                             % (tensor_index, sorted(self._inputs)))
        return self._inputs[tensor_index]

    def _locate(self, tensor_index):
        if tensor_index in self._inputs:
            return False, self._inputs[tensor_index]
        if tensor_index in self._outputs:
            return True, self._outputs[tensor_index]
        raise ValueError("Tensor %r is neither an input nor an output of the model (inputs %s, outputs %s); Kiln "
                         "exposes only those" % (tensor_index, sorted(self._inputs), sorted(self._outputs)))


class SignatureRunner:
    """Runs one signature of a model by its input and output names, as LiteRT's SignatureRunner:
    ``outputs = runner(x=..., y=...)`` resizes inputs whose shape changed, allocates, sets, invokes and returns
    {output name: array}."""

    def __init__(self, interpreter, signature):
        self._interpreter = interpreter
        self._key = signature["key"]
        self._inputs = dict(signature["inputs"])
        self._outputs = dict(signature["outputs"])
        for name, index in self._inputs.items():
            if index not in interpreter._inputs:
                raise ValueError("signature '%s': input '%s' is tensor %d, which is not an input of the model"
                                 % (self._key, name, index))
        for name, index in self._outputs.items():
            if index not in interpreter._outputs and index not in interpreter._inputs:
                raise ValueError("signature '%s': output '%s' is tensor %d, which is not an output of the model"
                                 % (self._key, name, index))

    def get_input_details(self):
        by_index = {d["index"]: d for d in self._interpreter.get_input_details()}
        return {name: by_index[index] for name, index in self._inputs.items()}

    def get_output_details(self):
        by_index = {d["index"]: d for d in self._interpreter.get_tensor_details()}
        return {name: by_index[index] for name, index in self._outputs.items()}

    def resize_tensor_input(self, input_name, new_shape):
        self._interpreter.resize_tensor_input(self._input_index(input_name), new_shape)

    def allocate_tensors(self):
        self._interpreter.allocate_tensors()

    def invoke(self, **kwargs):
        self(**kwargs)

    def __call__(self, **kwargs):
        missing = sorted(set(self._inputs) - set(kwargs))
        if len(kwargs) != len(self._inputs) or missing:
            raise ValueError("signature '%s' takes inputs %s; got %s" % (self._key, sorted(self._inputs),
                                                                        sorted(kwargs)))
        it = self._interpreter
        details = self.get_input_details()
        for name, value in kwargs.items():
            value = np.asarray(value)
            if list(value.shape) != list(details[name]["shape"]):
                it.resize_tensor_input(self._inputs[name], value.shape)
        if not it._allocated:
            it.allocate_tensors()
        for name, value in kwargs.items():
            it.set_tensor(self._input_index(name), np.asarray(value))
        it.invoke()
        return {name: it.get_tensor(index) for name, index in self._outputs.items()}

    def _input_index(self, name):
        if name not in self._inputs:
            raise ValueError("signature '%s' has no input '%s'; its inputs are %s" % (self._key, name,
                                                                                     sorted(self._inputs)))
        return self._inputs[name]


class _SubgraphSignatureRunner:
    """A signature over a subgraph other than 0 (a model's second entry point), run through the C API's signature
    runner (KilnSignatureRunner): the same calls as SignatureRunner, its tensors those of that subgraph."""

    def __init__(self, interpreter, signature):
        self._impl = interpreter._impl
        self._key = signature["key"]
        self._inputs = [name for name, _ in signature["inputs"]]
        self._outputs = [name for name, _ in signature["outputs"]]
        self._allocated = False

    def get_input_details(self):
        return {name: self._details(False, name) for name in self._inputs}

    def get_output_details(self):
        return {name: self._details(True, name) for name in self._outputs}

    def resize_tensor_input(self, input_name, new_shape):
        self._impl.signature_resize(self._key, self._input(input_name), [int(d) for d in new_shape])
        self._allocated = False

    def allocate_tensors(self):
        self._impl.signature_allocate(self._key)
        self._allocated = True

    def invoke(self, **kwargs):
        self(**kwargs)

    def __call__(self, **kwargs):
        missing = sorted(set(self._inputs) - set(kwargs))
        if len(kwargs) != len(self._inputs) or missing:
            raise ValueError("signature '%s' takes inputs %s; got %s" % (self._key, sorted(self._inputs),
                                                                        sorted(kwargs)))
        values = {name: np.asarray(value) for name, value in kwargs.items()}
        for name, value in values.items():
            if list(value.shape) != list(self._details(False, name)["shape"]):
                self.resize_tensor_input(name, value.shape)
        if not self._allocated:
            self.allocate_tensors()
        for name, value in values.items():
            view = self._impl.signature_view(self._key, False, name)
            if value.dtype != view.dtype:
                raise ValueError("signature '%s': input '%s' is %s, got %s" % (self._key, name, view.dtype,
                                                                                value.dtype))
            view[...] = value
        self._impl.signature_invoke(self._key)
        return {name: np.array(self._impl.signature_view(self._key, True, name)) for name in self._outputs}

    def _details(self, output, name):
        d = self._impl.signature_details(self._key, output, name)
        if isinstance(d["dtype"], np.dtype):
            d["dtype"] = d["dtype"].type
        return d

    def _input(self, name):
        if name not in self._inputs:
            raise ValueError("signature '%s' has no input '%s'; its inputs are %s" % (self._key, name,
                                                                                     sorted(self._inputs)))
        return name
