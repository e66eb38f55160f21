"""Kiln's compute API from NumPy: compile an RS-style kernel, run it over arrays on the CPU or a GPU driver.

    module = kiln.compile("scale.rs")          # or the source text itself
    ctx = kiln.Context(device="gpu")           # "auto", "cpu", "gpu", "gpu-only"
    script = ctx.script(module)
    script.gain = 2.0                          # script globals as attributes (or set/get)
    y = script.foreach("scale", x)             # a new array; or out=y
    total = script.reduce("sum", x)
    script.invoke("setup", 3, 0.5)

Arrays are used in place (no copy) when they are C-contiguous and 64-byte aligned, as arrays from
:func:`kiln.empty` are; on a driver device that shares host memory (integrated GPUs, Mesa's lavapipe) page-aligned
arrays are used in place there too. Other arrays are copied in, and outputs copied back.
"""
import os

import numpy as np

from kiln import _kiln

_ALIGNMENT = 64
_PAGE = 4096


def empty(shape, dtype=np.float32):
    """An uninitialised C-contiguous array that Kiln uses without copying: 64-byte aligned, and page-aligned from
    a page up (what devices that share host memory need to wrap it)."""
    dtype = np.dtype(dtype)
    shape = (shape,) if np.isscalar(shape) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    align = _PAGE if nbytes >= _PAGE else _ALIGNMENT
    raw = np.empty(nbytes + align, dtype=np.uint8)
    offset = (-raw.ctypes.data) % align
    return raw[offset:offset + nbytes].view(dtype).reshape(shape)


def _aligned_copy(array):
    out = empty(array.shape, array.dtype)
    np.copyto(out, array)
    return out


class Module:
    """A compiled kernel module (.kmod): its kernels, globals, invokables and reductions (``reflection``)."""

    def __init__(self, data):
        self._module = _kiln.Module(bytes(data))
        self.reflection = self._module.reflection()

    @property
    def kernels(self):
        return [k["name"] for k in self.reflection["kernels"]]

    @property
    def globals(self):
        return [g["name"] for g in self.reflection["globals"]]

    @property
    def invokables(self):
        return [f["name"] for f in self.reflection["invokables"]]

    @property
    def reductions(self):
        return [r["name"] for r in self.reflection["reductions"]]

    def to_bytes(self):
        return self._module.bytes()

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    def _find(self, section, name, what):
        for entry in self.reflection[section]:
            if entry["name"] == name:
                return entry
        names = [e["name"] for e in self.reflection[section]]
        raise KeyError("the module has no %s '%s'; it has %s" % (what, name, ", ".join(names) or "none"))


def load_module(path):
    """Loads a .kmod file written by kilnc (or Module.save)."""
    with open(path, "rb") as f:
        return Module(f.read())


def compile(source, filename=None, include_dirs=(), defines=(), opt_level=2, gpu=True):
    """Compiles an RS-style kernel with kilnc (in process) and returns its :class:`Module`.

    ``source`` is a path to a ``.rs`` file or the source text. ``defines`` are ``"NAME"`` or ``"NAME=VALUE"``;
    ``gpu`` False skips the SPIR-V lowering. Raises :class:`kiln.KilnError` with kilnc's diagnostics."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                          and source.endswith(".rs")):
        path = os.fspath(source)
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
        filename = filename or path
        include_dirs = list(include_dirs) + [os.path.dirname(os.path.abspath(path))]
    else:
        text = source
        filename = filename or "<python>.rs"
    return Module(_kiln.compile(text, filename, list(include_dirs), list(defines), int(opt_level), bool(gpu)))


# ---- script globals, invokable arguments and reduction results: packing by the module's reflection ----

def _lanes(t):
    """The lanes a vector type holds in memory (3-lane vectors take 4)."""
    return 4 if t["vector_size"] == 3 else t["vector_size"]


def _pack_into(t, value, buf, offset, what):
    kind = t["kind"]
    if t["array_size"]:
        elem = dict(t, array_size=0, size=t["size"] // t["array_size"])
        if elem["kind"] == "scalar":
            flat = np.asarray(value).reshape(-1)
            if flat.size != t["array_size"] * elem["vector_size"]:
                raise ValueError("%s is %s: expected %d values, got %d"
                                 % (what, t["name"], t["array_size"] * elem["vector_size"], flat.size))
            values = list(flat.reshape(t["array_size"], elem["vector_size"]))
        else:
            values = list(value)
        if len(values) != t["array_size"]:
            raise ValueError("%s: expected %d elements, got %d" % (what, t["array_size"], len(values)))
        for i, v in enumerate(values):
            _pack_into(elem, v, buf, offset + i * elem["size"], what)
        return
    if kind == "scalar":
        dtype = np.dtype(t["dtype"])
        lanes = np.asarray(value)
        n = t["vector_size"]
        if lanes.size != n:
            raise ValueError("%s is %s: expected %d value(s), got %d" % (what, t["name"], n, lanes.size))
        if dtype.kind in "iub" and lanes.dtype.kind == "f" and not np.all(np.isfinite(lanes) & (lanes == np.round(lanes))):
            raise TypeError("%s is %s: %r is not an integer" % (what, t["name"], value))
        data = np.asarray(lanes, dtype=dtype).reshape(-1).tobytes()
        buf[offset:offset + len(data)] = data
    elif kind == "struct":
        fields = t["fields"]
        if isinstance(value, dict):
            unknown = set(value) - {f["name"] for f in fields}
            if unknown:
                raise KeyError("%s (%s) has no field(s) %s" % (what, t["name"], ", ".join(sorted(unknown))))
            for f in fields:
                if f["name"] in value:
                    _pack_into(f["type"], value[f["name"]], buf, offset + f["offset"], what + "." + f["name"])
        else:
            values = list(value)
            if len(values) != len(fields):
                raise ValueError("%s (%s) has %d fields, got %d values" % (what, t["name"], len(fields), len(values)))
            for f, v in zip(fields, values):
                _pack_into(f["type"], v, buf, offset + f["offset"], what + "." + f["name"])
    elif kind in ("allocation", "pointer"):
        raise TypeError("%s is %s: bind an array to it with Script.bind() instead" % (what, t["name"]))
    else:
        raise TypeError("%s is %s, which cannot be set from Python" % (what, t["name"]))


def _unpack(t, data, offset=0):
    if t["array_size"]:
        elem = dict(t, array_size=0, size=t["size"] // t["array_size"])
        items = [_unpack(elem, data, offset + i * elem["size"]) for i in range(t["array_size"])]
        return np.array(items) if elem["kind"] == "scalar" else items
    kind = t["kind"]
    if kind == "scalar":
        dtype = np.dtype(t["dtype"])
        values = np.frombuffer(data, dtype=dtype, count=t["vector_size"], offset=offset).copy()
        return values[0] if t["vector_size"] == 1 else values
    if kind == "struct":
        return {f["name"]: _unpack(f["type"], data, offset + f["offset"]) for f in t["fields"]}
    raise TypeError("%s cannot be read from Python" % t["name"])


def _cells(array, t, what):
    """The cell shape of an array passed as a kernel input of type `t` (a vector takes the innermost dim)."""
    if t["kind"] != "scalar" or t["vector_size"] == 1:
        return array.shape
    lanes = t["vector_size"]
    if array.ndim == 0 or array.shape[-1] not in (lanes, _lanes(t)):
        raise ValueError("%s is %s: its innermost dimension must be %d, the array's shape is %s"
                         % (what, t["name"], lanes, array.shape))
    return array.shape[:-1]


class Context:
    """Where kernels run: the built-in CPU driver and, by ``device`` policy, a driver device.

    ``device``: ``"auto"`` (a GPU or accelerator when one loads, else the CPU), ``"cpu"``, ``"gpu"`` (the best
    driver device, lavapipe included, else the CPU) or ``"gpu-only"`` (fail without one). ``num_threads``
    None uses every core; ``driver_path`` a driver file or directory instead of KILN_DRIVER and the installed
    drivers."""

    def __init__(self, device="auto", num_threads=None, driver_path=None):
        self._impl = _kiln.Context(device, -1 if num_threads is None else int(num_threads),
                                   os.fspath(driver_path or ""))

    def script(self, module):
        """A new instance of `module` (a Module, a .kmod path or an .rs path): globals at their defaults, then
        its init()."""
        if isinstance(module, (str, os.PathLike)):
            path = os.fspath(module)
            module = compile(path) if path.endswith(".rs") else load_module(path)
        return Script(self, module)

    def explain(self):
        """The decision log as a list of dicts (kind, subject, message)."""
        return self._impl.decisions()


class Script:
    """One instance of a module in a context, with its own script globals (also readable and settable as
    attributes: ``script.gain = 2.0``)."""

    def __init__(self, context, module):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_impl", _kiln.Script(context._impl, module._module))

    # globals
    def set(self, name, value):
        g = self._module._find("globals", name, "global")
        if g["is_const"]:
            raise AttributeError("global '%s' is const" % name)
        buf = bytearray(g["size"])
        _pack_into(g["type"], value, buf, 0, "global '%s'" % name)
        self._impl.set_global(name, bytes(buf))

    def get(self, name):
        g = self._module._find("globals", name, "global")
        if g["is_allocation"]:
            raise TypeError("global '%s' is %s: it holds an array, not a value" % (name, g["type"]["name"]))
        return _unpack(g["type"], self._impl.get_global(name, g["size"]))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._module.globals:
            return self.get(name)
        raise AttributeError("the script has no global or method '%s'" % name)

    def __setattr__(self, name, value):
        if name in self._module.globals:
            self.set(name, value)
        else:
            raise AttributeError("the script has no global '%s'; its globals are %s"
                                 % (name, ", ".join(self._module.globals) or "none"))

    def bind(self, name, array, vector_size=0):
        """Binds `array` to an rs_allocation or pointer global (None unbinds). Used in place when aligned (see
        kiln.empty): later writes by NumPy are then seen by kernels without binding again. ``vector_size`` states
        the element's lanes as RenderScript's Element did (0 infers it)."""
        self._module._find("globals", name, "global")
        self._impl.bind(name, None if array is None else np.asarray(array), int(vector_size))

    # launches
    def foreach(self, kernel, *inputs, out=None, limits=None):
        """Runs `kernel` over every cell of the output: out[cell] = kernel(inputs[0][cell], ...), with NumPy
        broadcasting. Without ``out`` a new array of the kernel's output type is made and returned. ``limits`` is
        (x_start, x_end, y_start, y_end, z_start, z_end), an end of 0 meaning the full extent."""
        k = self._module._find("kernels", kernel, "kernel")
        arrays = [np.asarray(a) for a in inputs]
        if len(arrays) != len(k["inputs"]):
            raise TypeError("kernel '%s' takes %d input(s), got %d" % (kernel, len(k["inputs"]), len(arrays)))
        for i, (a, t) in enumerate(zip(arrays, k["inputs"])):
            if t["kind"] == "scalar" and a.dtype != np.dtype(t["dtype"]):
                raise TypeError("kernel '%s' input %d is %s (%s); the array is %s"
                                % (kernel, i, t["name"], t["dtype"], a.dtype))
        if out is None and k["has_output"]:
            if not arrays:
                raise ValueError("kernel '%s' has no inputs: pass out= to say the shape to run over" % kernel)
            cells = np.broadcast_shapes(*[_cells(a, t, "kernel '%s' input %d" % (kernel, i))
                                          for i, (a, t) in enumerate(zip(arrays, k["inputs"]))])
            o = k["output"]
            lanes = [] if o["vector_size"] == 1 else [_lanes(o)]
            out = empty(tuple(cells) + tuple(lanes), o["dtype"])
        elif out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("out must be a NumPy array")
            o = k["output"]
            if k["has_output"] and out.dtype != np.dtype(o["dtype"]):
                raise TypeError("kernel '%s' writes %s (%s); out is %s" % (kernel, o["name"], o["dtype"], out.dtype))
            if not out.flags.writeable:
                raise ValueError("out is read-only")
        self._impl.foreach(kernel, arrays, out, limits)
        return out

    def reduce(self, name, *inputs, limits=None):
        """Runs reduction `name` (#pragma rs reduce) over the inputs and returns its result."""
        r = self._module._find("reductions", name, "reduction")
        arrays = [np.asarray(a) for a in inputs]
        for i, (a, t) in enumerate(zip(arrays, r["inputs"])):
            if t["kind"] == "scalar" and a.dtype != np.dtype(t["dtype"]):
                raise TypeError("reduction '%s' input %d is %s (%s); the array is %s"
                                % (name, i, t["name"], t["dtype"], a.dtype))
        data = self._impl.reduce(name, arrays, r["result"]["size"], limits)
        return _unpack(r["result"], data)

    def invoke(self, name, *args):
        """Calls invokable `name` with `args` in declaration order."""
        f = self._module._find("invokables", name, "invokable")
        params = f["params"]
        if len(args) != len(params):
            raise TypeError("invokable '%s' takes %d argument(s), got %d" % (name, len(params), len(args)))
        buf = bytearray(f["args_size"])
        for p, v in zip(params, args):
            _pack_into(p["type"], v, buf, p["offset"], "argument '%s' of %s" % (p["name"], name))
        self._impl.invoke(name, bytes(buf))
