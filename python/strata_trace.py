#!/usr/bin/env python3
"""strata_trace: a PyTorch module as a Strata trace file (format v1).

    import strata_trace
    trace = strata_trace.export(model, (tokens,), name="my-gpt")
    strata_trace.write(trace, "my-gpt.json")

or from the shell, for a module a Python file builds:

    python3 strata_trace.py my_model.py:build -o my-model.json

(`build` is called with no arguments and returns (module, example_inputs)).

How it works.  The module is traced with torch.fx symbolic tracing by a
Tracer that runs the example inputs alongside, so that every node has its
concrete shape, code that reads shapes (b, s, h = x.shape) traces, and
each node knows which submodule it comes from.  Each node
becomes one op of docs/trace-format.md: nn.Linear and F.linear -> linear,
nn.LayerNorm -> layernorm, any module whose class name ends in "RMSNorm"
(with a `weight`) -> rmsnorm, nn.Embedding -> embedding (token ids [b,s]) or
gather, a Conv2d whose stride equals its kernel -> patch_embed, matmul and
bmm -> matmul, softmax -> softmax, GELU/ReLU/SiLU -> their kinds, dropout ->
dropout, + and * -> add and mul (broadcasting), a multiplication by a
constant or a masked_fill -> scale, view/reshape/flatten -> reshape,
transpose/permute -> transpose or permute, cat -> concat, split/chunk ->
split, indexing with one slice -> slice, contiguous and friends -> nothing
(an alias).  Attention written out (q @ k^T, scale, mask, softmax, @ v) is
these same ops, as the presets' unfused attention;
F.scaled_dot_product_attention (PyTorch 2) becomes flash_attention.
Anything else becomes a `generic` op with its real inputs and outputs and
FLOPs from its output's size, so nothing is dropped.

Layers.  Submodules of one container numbered 0, 1, 2, ... (an
nn.ModuleList, or nn.Sequential) of one class are the model's layers: each
is written as a block of its own, and Strata's loader folds identical ones
into one repeated block.  A loss (cross_entropy over the last dim, with a
`labels` input) is appended unless loss=None.

Only the Python standard library and torch are used.  torch.export
(PyTorch >= 2.1) is not used: it gives aten-level graphs, and the value-
carrying fx tracer here already has what it would add (concrete shapes,
the module each node comes from) on every PyTorch from 1.13 on.
"""

import json
import operator
import os
import sys

import torch
import torch.fx as fx
import torch.nn as nn

__all__ = ["export", "write", "trace_module", "ExportError"]

FORMAT_VERSION = 1


class ExportError(Exception):
    """The module cannot be written as a trace (says what and where)."""


_DTYPES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.float64: "f32", torch.int64: "i64", torch.int32: "i32",
    torch.uint8: "u8", torch.bool: "u8", torch.int16: "i32", torch.int8: "u8",
}

# Calls whose result is their (first) input: no op, no new tensor.
_ALIASES = {"contiguous", "clone", "detach", "to", "float", "half", "bfloat16",
            "type_as", "requires_grad_"}
_VIEWS = {"view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze",
          "view_as", "reshape_as"}


class _unpatched:
    """Module calls and attribute reads as outside tracing (fx patches
    them while it traces), to compute a leaf module's value."""

    def __enter__(self):
        from torch.fx import _symbolic_trace as st
        self.saved = (nn.Module.__call__, nn.Module.__getattr__)
        nn.Module.__call__ = st._orig_module_call
        nn.Module.__getattr__ = st._orig_module_getattr

    def __exit__(self, *exc):
        nn.Module.__call__, nn.Module.__getattr__ = self.saved
        return False


class _ValProxy(fx.Proxy):
    """A proxy whose shape is the example's: x.shape, x.size(), x.dim()
    and x.numel() are plain values, not nodes."""

    _CONCRETE = ("shape", "ndim", "dtype", "device", "is_cuda")

    def __getattr__(self, k):
        if k in _ValProxy._CONCRETE:
            return getattr(self.node.meta.get("val"), k)
        return super().__getattr__(k)

    def size(self, *dim):
        return self.node.meta.get("val").size(*dim)

    def dim(self):
        return self.node.meta.get("val").dim()

    def numel(self):
        return self.node.meta.get("val").numel()


class _Tracer(fx.Tracer):
    """Symbolic tracing with the example's values alongside.

    Every node gets its concrete value (node.meta["val"]), computed as it
    is created, so that the trace is specialised to the example's shapes
    as a Strata trace is: reading a shape (x.shape, x.size(), x.dim())
    gives plain ints rather than proxies, unpacking a proxy of a tuple
    works, and a branch on a proxy takes the example's way.  Each node is
    stamped with the module path it was made in (the layers are found from
    it), and norm modules are kept whole (leaves).  With the module and
    inputs on the "meta" device nothing is computed but shapes."""

    def __init__(self, example_inputs):
        super().__init__()
        self.stack = []
        self.examples = list(example_inputs)
        self.n_placeholders = 0

    def is_leaf_module(self, m, qualname):
        if type(m).__name__.endswith("RMSNorm"):
            return True
        return super().is_leaf_module(m, qualname)

    def call_module(self, m, forward, args, kwargs):
        self.stack.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.stack.pop()

    def _value(self, kind, target, args, kwargs):
        def val(a):
            if isinstance(a, fx.proxy.Attribute):  # no node made for it
                return getattr(val(a.root), a.attr)
            if isinstance(a, fx.Proxy):
                return a.node.meta.get("val")
            if isinstance(a, fx.Node):
                return a.meta.get("val")
            return a
        args = fx.node.map_aggregate(args, val)
        kwargs = fx.node.map_aggregate(kwargs, val)
        with torch.no_grad(), _unpatched():
            if kind == "placeholder":
                v = self.examples[self.n_placeholders]
                self.n_placeholders += 1
                return v
            if kind == "get_attr":
                obj = self.root
                for part in target.split("."):
                    obj = getattr(obj, part)
                return obj
            if kind == "call_function":
                return target(*args, **kwargs)
            if kind == "call_method":
                return getattr(args[0], target)(*args[1:], **kwargs)
            if kind == "call_module":
                return self.root.get_submodule(target)(*args, **kwargs)
        return None

    def create_proxy(self, kind, target, args, kwargs, name=None,
                     type_expr=None, proxy_factory_fn=None):
        v = self._value(kind, target, args, kwargs)
        p = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                 proxy_factory_fn)
        p.node.meta["val"] = v
        p.node.meta["strata_stack"] = list(self.stack)
        return p

    def proxy(self, node):
        return _ValProxy(node, self)

    def iter(self, obj):
        v = obj.node.meta.get("val")
        if isinstance(v, (tuple, list)) or (isinstance(v, torch.Tensor) and
                                             v.dim() > 0):
            return iter([obj[i] for i in range(len(v))])
        return super().iter(obj)

    def to_bool(self, obj):
        return bool(obj.node.meta.get("val"))

    def keys(self, obj):
        return obj.node.meta.get("val").keys()


class _TensorMeta:
    def __init__(self, t):
        self.shape = tuple(t.shape)
        self.dtype = t.dtype


def trace_module(module, example_inputs):
    """The fx GraphModule of module, each node with its example value
    (node.meta["val"]) and shape (node.meta["tensor_meta"])."""
    tracer = _Tracer(example_inputs)
    graph = tracer.trace(module)
    gm = fx.GraphModule(module, graph)
    for node in gm.graph.nodes:
        v = node.meta.get("val")
        if isinstance(v, torch.Tensor):
            node.meta["tensor_meta"] = _TensorMeta(v)
        elif isinstance(v, (tuple, list)) and v and \
                all(isinstance(x, torch.Tensor) for x in v):
            node.meta["tensor_meta"] = [_TensorMeta(x) for x in v]
    return gm


def _meta(node):
    tm = node.meta.get("tensor_meta")
    if tm is None or isinstance(tm, (tuple, list, dict)):
        return None
    return tm


class _Writer:
    """Builds the trace's tensors and ops from fx nodes."""

    def __init__(self, gm, dtype):
        self.gm = gm
        self.dtype = dtype
        self.tensors = []        # dicts in file order
        self.tensor_ids = set()
        self.ops = []
        self.value = {}          # fx node -> tensor id (or list of ids)
        self.params = {}         # parameter object id -> tensor id
        self.op_names = set()
        self.op_stack = []       # per op: the module path stack

    # ---- names and tensors ----

    def _unique(self, base, taken):
        name, i = base, 1
        while name in taken:
            i += 1
            name = "%s_%d" % (base, i)
        taken.add(name)
        return name

    def tensor(self, name, shape, dtype, kind):
        tid = self._unique(name, self.tensor_ids)
        if any(int(d) < 1 for d in shape):
            raise ExportError("tensor '%s' has a zero dim %s" % (name, list(shape)))
        self.tensors.append({"id": tid, "shape": [int(d) for d in shape],
                             "dtype": dtype, "kind": kind})
        return tid

    def dt(self, torch_dtype):
        if torch_dtype.is_floating_point:
            return self.dtype
        if torch_dtype not in _DTYPES:
            raise ExportError("dtype %s has no Strata equivalent" % torch_dtype)
        return _DTYPES[torch_dtype]

    def param(self, name, p):
        """The trace tensor of parameter (or buffer) p, made once."""
        key = id(p)
        if key not in self.params:
            kind = "param" if isinstance(p, nn.Parameter) else "input"
            self.params[key] = self.tensor(name, tuple(p.shape),
                                           self.dt(p.dtype), kind)
        return self.params[key]

    def shape_of(self, tid):
        for t in reversed(self.tensors):
            if t["id"] == tid:
                return t["shape"]
        raise KeyError(tid)

    # ---- ops ----

    def op(self, node, kind, inputs, out_shapes, **attrs):
        """One op with outputs named after node; returns the output ids."""
        name = self._unique(node.name, self.op_names)
        outs = []
        for i, (shape, dtype) in enumerate(out_shapes):
            suffix = ".out" if len(out_shapes) == 1 else ".out%d" % i
            outs.append(self.tensor(name + suffix, shape, dtype, "activation"))
        op = {"id": name, "kind": kind, "inputs": list(inputs), "outputs": outs}
        op.update({k: v for k, v in attrs.items() if v is not None})
        self.ops.append(op)
        self.op_stack.append(node.meta.get("strata_stack", []))
        return outs

    def op1(self, node, kind, inputs, **attrs):
        tm = _meta(node)
        return self.op(node, kind, inputs,
                       [(tuple(tm.shape), self.dt(tm.dtype))], **attrs)[0]


def _arg_node(a):
    return a if isinstance(a, fx.Node) else None


def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _norm_dim(d, ndim):
    return d + ndim if d < 0 else d


class _Mapper:
    """Maps each fx node onto trace ops (the table in the module doc)."""

    def __init__(self, gm, writer, example_inputs):
        self.gm = gm
        self.w = writer
        self.modules = dict(gm.named_modules())
        self.examples = list(example_inputs)

    def val(self, a):
        """The trace tensor of an argument (a node), or None."""
        if isinstance(a, fx.Node):
            v = self.w.value.get(a)
            return v if isinstance(v, str) else None
        return None

    def shape(self, a):
        tm = _meta(a) if isinstance(a, fx.Node) else None
        return tuple(tm.shape) if tm is not None else None

    def generic(self, node, inputs=None, flops=None):
        """What is not understood: its tensor inputs, its outputs, FLOPs
        one per output element unless given."""
        tm = _meta(node)
        if tm is None:
            return None
        if inputs is None:
            inputs = []
            for a in list(node.args) + list(node.kwargs.values()):
                for x in (a if isinstance(a, (list, tuple)) else [a]):
                    v = self.val(x)
                    if v is not None and v not in inputs:
                        inputs.append(v)
        inputs = inputs[:4]
        if flops is None:
            flops = float(_numel(tm.shape))
        return self.w.op1(node, "generic", inputs, flops=float(flops))

    # ---- placeholders and attributes ----

    def placeholder(self, node, index):
        tm = _meta(node)
        if tm is None:
            raise ExportError("input '%s' is not a tensor" % node.name)
        self.w.value[node] = self.w.tensor(node.name, tuple(tm.shape),
                                           self.w.dt(tm.dtype), "input")

    def get_attr(self, node):
        obj = self.gm
        for part in node.target.split("."):
            obj = getattr(obj, part)
        if isinstance(obj, torch.Tensor):
            if obj.dim() == 0:
                self.w.value[node] = ("const", obj.item())
            else:
                self.w.value[node] = self.w.param(node.target, obj)

    # ---- modules ----

    def call_module(self, node):
        m = self.modules[node.target]
        x = self.val(node.args[0]) if node.args else None
        w = self.w
        t = node.target
        if isinstance(m, nn.Linear):
            ins = [x, w.param(t + ".weight", m.weight)]
            if m.bias is not None:
                ins.append(w.param(t + ".bias", m.bias))
            return w.op1(node, "linear", ins)
        if isinstance(m, nn.LayerNorm) and m.elementwise_affine and \
                len(m.normalized_shape) == 1:
            ins = [x, w.param(t + ".weight", m.weight)]
            if getattr(m, "bias", None) is not None:
                ins.append(w.param(t + ".bias", m.bias))
            return w.op1(node, "layernorm", ins)
        if type(m).__name__.endswith("RMSNorm") and \
                isinstance(getattr(m, "weight", None), torch.Tensor):
            return w.op1(node, "rmsnorm", [x, w.param(t + ".weight", m.weight)])
        if isinstance(m, nn.Embedding):
            return self.embedding(node, x, w.param(t + ".weight", m.weight))
        if isinstance(m, nn.Conv2d):
            return self.conv(node, m, x)
        if isinstance(m, nn.Dropout):
            return w.op1(node, "dropout", [x], dropout_p=float(m.p)) \
                if m.p > 0 else x
        if isinstance(m, nn.Identity):
            return x
        act = {nn.GELU: "gelu", nn.ReLU: "relu", nn.SiLU: "silu"}
        for cls, kind in act.items():
            if isinstance(m, cls):
                return w.op1(node, kind, [x])
        if isinstance(m, nn.Softmax) and m.dim is not None and \
                _norm_dim(m.dim, len(self.shape(node))) == len(self.shape(node)) - 1:
            return w.op1(node, "softmax", [x])
        ins = [x] + [w.param("%s.%s" % (t, n), p)
                     for n, p in m.named_parameters(recurse=False)]
        return self.generic(node, inputs=[i for i in ins if i is not None])

    def embedding(self, node, idx, table):
        ishape = self.w.shape_of(idx)
        tshape = self.w.shape_of(table)
        if len(ishape) == 2 and len(tshape) == 2:
            return self.w.op1(node, "embedding", [idx, table])
        return self.w.op1(node, "gather", [idx, table], axis=0)

    def conv(self, node, m, x):
        k, s = tuple(m.kernel_size), tuple(m.stride)
        t = node.target
        out = _meta(node)
        if k == s and m.groups == 1 and tuple(m.padding) == (0, 0) and \
                tuple(m.dilation) == (1, 1) and len(out.shape) == 4:
            # patch_embed gives [b, patches, h]; PyTorch's layout
            # [b, h, H', W'] is a free view of it (permute + reshape)
            b, h, hh, ww = out.shape
            ins = [x, self.w.param(t + ".weight", m.weight)]
            if m.bias is not None:
                ins.append(self.w.param(t + ".bias", m.bias))
            dt = self.w.dt(out.dtype)
            pe = self.w.op(node, "patch_embed", ins, [((b, hh * ww, h), dt)])[0]
            pv = self.w.op(node, "permute", [pe], [((b, h, hh * ww), dt)],
                           perm=[0, 2, 1])[0]
            return self.w.op(node, "reshape", [pv], [((b, h, hh, ww), dt)])[0]
        cin = m.in_channels // m.groups
        flops = 2.0 * _numel(out.shape) * cin * _numel(k)
        ins = [x, self.w.param(t + ".weight", m.weight)]
        return self.generic(node, inputs=ins, flops=flops)

    # ---- functions and methods ----

    def binary(self, node, kind):
        a, b = node.args[0], node.args[1]
        va, vb = self.val(a), self.val(b)
        if va is None and vb is None:
            return None
        if va is None or vb is None:  # a tensor and a constant
            return self.w.op1(node, "scale", [va or vb])
        sa, sb = self.w.shape_of(va), self.w.shape_of(vb)
        out = tuple(self.shape(node))
        if tuple(sa) == out and _broadcasts(sb, out):
            return self.w.op1(node, kind, [va, vb])
        if tuple(sb) == out and _broadcasts(sa, out):
            return self.w.op1(node, kind, [vb, va])
        return self.generic(node)

    def matmul(self, node):
        a, b = self.val(node.args[0]), self.val(node.args[1])
        sa, sb = self.w.shape_of(a), self.w.shape_of(b)
        ok = len(sa) == len(sb) and len(sa) >= 2 and sa[-1] == sb[-2] and \
            all(y > 0 and x % y == 0 for x, y in zip(sa[:-2], sb[:-2]))
        if ok:
            return self.w.op1(node, "matmul", [a, b])
        out = self.shape(node)
        return self.generic(node, flops=2.0 * _numel(out) * sa[-1])

    def call(self, node, name):
        """call_function and call_method, by name."""
        w, args = self.w, node.args
        x = self.val(args[0]) if args else None
        out = self.shape(node)
        if name in _ALIASES:
            return x
        if name in ("add", "iadd", "sub", "rsub"):
            return self.binary(node, "add")
        if name in ("mul", "imul", "truediv", "div"):
            if name in ("truediv", "div") and self.val(args[1]) is not None:
                return self.generic(node)
            return self.binary(node, "mul")
        if name in ("matmul", "bmm"):
            return self.matmul(node)
        if name == "linear":
            ins = [x, self.val(args[1])]
            b = args[2] if len(args) > 2 else node.kwargs.get("bias")
            if self.val(b) is not None:
                ins.append(self.val(b))
            return w.op1(node, "linear", ins)
        if name in ("softmax",):
            dim = args[1] if len(args) > 1 else node.kwargs.get("dim", -1)
            if _norm_dim(dim, len(out)) == len(out) - 1:
                return w.op1(node, "softmax", [x])
            return self.generic(node)
        if name in ("gelu", "relu", "silu"):
            return w.op1(node, name, [x])
        if name == "dropout":
            p = args[1] if len(args) > 1 else node.kwargs.get("p", 0.5)
            train = node.kwargs.get("training", True)
            return w.op1(node, "dropout", [x], dropout_p=float(p)) \
                if p > 0 and train else x
        if name in ("masked_fill", "masked_fill_"):
            return w.op1(node, "scale", [x])
        if name in _VIEWS:
            if tuple(w.shape_of(x)) == tuple(out):
                return x
            return w.op1(node, "reshape", [x])
        if name in ("transpose", "permute"):
            return self.permute(node, x, name)
        if name == "cat":
            return self.concat(node)
        if name == "embedding":
            return self.embedding(node, x, self.val(args[1]))
        if name == "scaled_dot_product_attention":
            return self.sdpa(node)
        if name == "getitem":
            return self.getitem(node)
        if name in ("split", "chunk"):
            return self.split(node, x)
        return self.generic(node)

    def permute(self, node, x, name):
        nd = len(self.w.shape_of(x))
        if name == "transpose":
            a, b = (_norm_dim(d, nd) for d in node.args[1:3])
            perm = list(range(nd))
            perm[a], perm[b] = perm[b], perm[a]
        else:
            dims = node.args[1:]
            if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
                dims = dims[0]
            perm = [_norm_dim(d, nd) for d in dims]
        if perm == list(range(nd)):
            return x
        if perm == list(range(nd - 2)) + [nd - 1, nd - 2]:
            return self.w.op1(node, "transpose", [x])
        return self.w.op1(node, "permute", [x], perm=perm)

    def concat(self, node):
        parts = [self.val(a) for a in node.args[0]]
        if any(p is None for p in parts):
            return self.generic(node)
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
        nd = len(self.shape(node))
        axis = _norm_dim(dim, nd)
        dt = self.w.dt(_meta(node).dtype)
        while len(parts) > 4:  # at most four inputs an op: chain them
            shape = list(self.w.shape_of(parts[0]))
            shape[axis] = sum(self.w.shape_of(p)[axis] for p in parts[:4])
            part = self.w.op(node, "concat", parts[:4], [(shape, dt)],
                             axis=axis)[0]
            parts = [part] + parts[4:]
        return self.w.op1(node, "concat", parts, axis=axis)

    def split(self, node, x):
        """split/chunk: a list of outputs, each read by getitem."""
        tm = node.meta.get("tensor_meta")
        if not isinstance(tm, (list, tuple)):
            return self.generic(node)
        dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
        nd = len(self.w.shape_of(x))
        axis = _norm_dim(dim, nd)
        shapes = [(tuple(t.shape), self.w.dt(t.dtype)) for t in tm]
        if len(shapes) <= 3:
            return self.w.op(node, "split", [x], shapes, axis=axis)
        outs, start = [], 0
        for shape, dt in shapes:  # more parts than an op has outputs
            n = shape[axis]
            outs.append(self.w.op(node, "slice", [x], [(shape, dt)], axis=axis,
                                  start=start, end=start + n)[0])
            start += n
        return outs

    def getitem(self, node):
        src, idx = node.args[0], node.args[1]
        v = self.w.value.get(src)
        if isinstance(v, list):
            return v[idx]
        x = self.val(src)
        if x is None:
            return None
        shape = self.w.shape_of(x)
        idx = idx if isinstance(idx, tuple) else (idx,)
        out = self.shape(node)
        # one dim sliced with step 1, the others whole: a slice
        cut = [(i, s) for i, s in enumerate(idx)
               if not (isinstance(s, slice) and s == slice(None))]
        if len(cut) == 1 and isinstance(cut[0][1], slice) and \
                cut[0][1].step in (None, 1) and Ellipsis not in idx:
            axis, s = cut[0]
            start, end, _ = s.indices(shape[axis])
            if end > start:
                if end - start == shape[axis]:
                    return x
                return self.w.op1(node, "slice", [x], axis=axis, start=start,
                                  end=end)
        if len(cut) == 1 and isinstance(cut[0][1], int) and Ellipsis not in idx:
            # x[:, 0]: a slice of one, then the dim dropped (a view)
            axis, i = cut[0]
            i = _norm_dim(i, shape[axis])
            one = list(shape)
            one[axis] = 1
            dt = self.w.dt(_meta(node).dtype)
            s = self.w.op(node, "slice", [x], [(one, dt)], axis=axis, start=i,
                          end=i + 1)[0]
            if tuple(out) == tuple(one):
                return s
            return self.w.op(node, "reshape", [s], [(tuple(out), dt)])[0]
        return self.generic(node, inputs=[x], flops=0.0)

    def sdpa(self, node):
        q, k, v = (self.val(a) for a in node.args[:3])
        causal = bool(node.kwargs.get("is_causal", False))
        sq, sk = self.w.shape_of(q), self.w.shape_of(k)
        if len(sq) != 4 or node.kwargs.get("attn_mask") is not None:
            return self.generic(node, flops=4.0 * _numel(sq) * sk[-2])
        kind = "flash_attention" if sq[2] == sk[2] else "cross_attention"
        return self.w.op1(node, kind, [q, k, v], heads=sq[1], kv_heads=sk[1],
                          causal=causal or None)


def _broadcasts(small, big):
    small, big = tuple(small), tuple(big)
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(small[::-1], big[::-1]))


def _fn_name(node):
    t = node.target
    if node.op == "call_method":
        return t
    if t is operator.getitem:
        return "getitem"
    name = getattr(t, "__name__", str(t))
    return name.lstrip("_") if name.startswith("__") else name


# ---- layers ----

def _layer_of(stack):
    """(container, index) of the innermost numbered submodule, or None."""
    for path in reversed(stack):
        parts = path.split(".")
        for i in range(len(parts) - 1, 0, -1):
            if parts[i].isdigit():
                return ".".join(parts[:i]), int(parts[i])
    return None


def _find_blocks(w):
    """Runs of ops of layers 0, 1, ... of one container: each a block, with
    the residual stream as its input and output (None if the layers do
    not have that shape)."""
    tags = [_layer_of(s) for s in w.op_stack]
    containers = {}
    for t in tags:
        if t is not None:
            containers.setdefault(t[0], set()).add(t[1])
    if not containers:
        return []
    name = max(containers, key=lambda c: len(containers[c]))
    n = len(containers[name])
    if sorted(containers[name]) != list(range(n)):
        return []
    spans = []
    for layer in range(n):
        idx = [i for i, t in enumerate(tags) if t == (name, layer)]
        if not idx or idx != list(range(idx[0], idx[-1] + 1)):
            return []
        spans.append((idx[0], idx[-1]))
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        if b0 != a1 + 1:
            return []
    return _streams(w, spans, name)


def _streams(w, spans, name):
    produced_in = {}
    for i, op in enumerate(w.ops):
        for o in op["outputs"]:
            produced_in[o] = i
    kinds = {t["id"]: t["kind"] for t in w.tensors}
    blocks = []
    for layer, (f, l) in enumerate(spans):
        ext = []
        for op in w.ops[f:l + 1]:
            for x in op["inputs"]:
                p = produced_in.get(x)
                if kinds[x] == "activation" and p is not None and p < f and \
                        x not in ext:
                    ext.append(x)
        outs = set()
        for i, op in enumerate(w.ops):
            if f <= i <= l:
                continue
            for x in op["inputs"]:
                p = produced_in.get(x)
                if p is not None and f <= p <= l:
                    outs.add(x)
        if len(outs) != 1:
            return []
        out = outs.pop()
        if layer > 0:
            stream = blocks[-1]["output"]
            if stream not in ext:
                return []
        else:
            stream = None
        blocks.append({"id": "%s.%d" % (name, layer),
                       "ops": [w.ops[f]["id"], w.ops[l]["id"]], "repeat": 1,
                       "input": stream, "output": out, "_ext": ext})
    # layer 0's stream: the external activation later layers do not share
    shared = set(blocks[1]["_ext"]) if len(blocks) > 1 else set()
    first = [x for x in blocks[0]["_ext"] if x not in shared]
    if len(first) != 1:
        return []
    blocks[0]["input"] = first[0]
    shapes = {t["id"]: (t["shape"], t["dtype"]) for t in w.tensors}
    for b in blocks:
        del b["_ext"]
        if shapes[b["input"]] != shapes[b["output"]]:
            return []
    return blocks


# ---- the trace ----

def _add_loss(w, out_id, loss):
    shape = w.shape_of(out_id)
    if loss is None or len(shape) < 2:
        return
    if loss != "cross_entropy":
        raise ExportError("loss must be 'cross_entropy' or None, not %r" % loss)
    labels = w.tensor("labels", shape[:-1], "i64", "input")
    ce = w.tensor("loss.out", [], "f32", "activation")
    w.ops.append({"id": w._unique("loss", w.op_names), "kind": "cross_entropy",
                  "inputs": [out_id, labels], "outputs": [ce]})
    w.op_stack.append([])


def _seq_len(w, first_input):
    """The sequence: dim 1 of integer token ids, else the size of the
    attention matrices (softmax over [..., s, s])."""
    t = w.tensors[0] if w.tensors else None
    if first_input is not None and first_input.dim() >= 2 and \
            not first_input.is_floating_point():
        return int(first_input.shape[1])
    shapes = {x["id"]: x["shape"] for x in w.tensors}
    for op in w.ops:
        if op["kind"] == "softmax":
            s = shapes[op["outputs"][0]]
            if len(s) >= 2 and s[-1] == s[-2]:
                return int(s[-1])
    if t is not None and len(t["shape"]) >= 2:
        return int(t["shape"][1])
    return 1


def _output_node(gm):
    for node in gm.graph.nodes:
        if node.op == "output":
            out = node.args[0]
            while isinstance(out, (tuple, list)):
                out = out[0]
            return out
    raise ExportError("the traced graph has no output")


def export(module, example_inputs, name=None, dtype="bf16",
           loss="cross_entropy"):
    """The trace (a dict in docs/trace-format.md's form) of module run on
    example_inputs (a tuple); dtype is the trace's for floating tensors."""
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    if dtype not in ("f32", "bf16", "f16", "f8"):
        raise ExportError("dtype must be f32, bf16, f16 or f8, not %r" % dtype)
    gm = trace_module(module, example_inputs)
    w = _Writer(gm, dtype)
    m = _Mapper(gm, w, example_inputs)
    ph = 0
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            m.placeholder(node, ph)
            ph += 1
        elif node.op == "get_attr":
            m.get_attr(node)
        elif node.op == "call_module":
            w.value[node] = m.call_module(node)
        elif node.op in ("call_function", "call_method"):
            w.value[node] = m.call(node, _fn_name(node))
    out = w.value.get(_output_node(gm))
    if not isinstance(out, str):
        raise ExportError("the module's output is not a tensor")
    _add_loss(w, out, loss)
    _prune(w)
    first = example_inputs[0] if example_inputs else None
    micro = int(first.shape[0]) if first is not None and first.dim() else 1
    trace = {"format": "strata-trace", "version": FORMAT_VERSION,
             "name": name or type(module).__name__, "micro_batch": micro,
             "seq_len": _seq_len(w, first), "tensors": w.tensors,
             "ops": w.ops, "blocks": _find_blocks(w)}
    return trace


def _prune(w):
    """Drop tensors no op reads or writes (unused buffers, constants)."""
    used = set()
    for op in w.ops:
        used.update(op["inputs"])
        used.update(op["outputs"])
    w.tensors = [t for t in w.tensors if t["id"] in used]


def write(trace, path):
    """Write the trace to path (through a temporary file, then renamed)."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(trace, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def _main(argv):
    import argparse
    import importlib.util
    ap = argparse.ArgumentParser(
        description="Write a PyTorch module as a Strata trace file.")
    ap.add_argument("builder", help="FILE.py:FUNCTION returning (module, "
                    "example_inputs)")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--name")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--no-loss", action="store_true")
    a = ap.parse_args(argv)
    path, _, fn = a.builder.partition(":")
    spec = importlib.util.spec_from_file_location("strata_user_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    module, inputs = getattr(mod, fn or "build")()
    trace = export(module, inputs, name=a.name, dtype=a.dtype,
                   loss=None if a.no_loss else "cross_entropy")
    write(trace, a.output)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_main(sys.argv[1:]))
    except ExportError as e:
        print("strata_trace: %s" % e, file=sys.stderr)
        sys.exit(2)
