#!/usr/bin/env python3
"""A small GPT written with onnx.helper in the style of exporters other
than torch (tf2onnx and hand-built graphs): names as TensorFlow scopes
("tf_gpt/h_._0/attn/MatMul", values "...:0"), every weight a Constant
node rather than an initializer, MatMul weights [in, out] with the bias
added after, LayerNorm decomposed as ReduceMean, Sub, Mul, ReduceMean,
Add, Sqrt, Reciprocal, Mul, Mul, Add, grouped-query attention with the
key/value heads repeated by Tile, a causal mask from Range, Less and
Where, no value_info, producer "tf2onnx", opset 13.

    write(path) -> the parameter count (every Constant weight, the mask
    left out)"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

V, S, H, HEADS, KV, B, LAYERS = 256, 16, 32, 4, 2, 2, 2
D = H // HEADS


class G:
    def __init__(self):
        self.nodes, self.params, self.n = [], 0, 0
        self.rng = np.random.default_rng(0)

    def const(self, name, arr, param=False):
        arr = np.asarray(arr)
        self.nodes.append(helper.make_node(
            "Constant", [], [name + ":0"], name=name,
            value=numpy_helper.from_array(arr, name + ":0")))
        if param:
            self.params += arr.size
        return name + ":0"

    def weight(self, name, *shape):
        w = self.rng.standard_normal(shape).astype(np.float32) * 0.02
        return self.const(name, w, True)

    def op(self, op, scope, ins, n_out=1, **attrs):
        self.n += 1
        name = "%s/%s_%d" % (scope, op, self.n)
        outs = ["%s:%d" % (name, i) for i in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def ints(self, name, vals):
        return self.const(name, np.array(vals, dtype=np.int64))


def layernorm(g, scope, x):
    m = g.op("ReduceMean", scope, [x], axes=[-1])
    c = g.op("Sub", scope, [x, m])
    var = g.op("ReduceMean", scope, [g.op("Mul", scope, [c, c])], axes=[-1])
    eps = g.const(scope + "/eps", np.array(1e-5, dtype=np.float32))
    r = g.op("Reciprocal", scope, [g.op("Sqrt", scope,
                                        [g.op("Add", scope, [var, eps])])])
    y = g.op("Mul", scope, [c, r])
    y = g.op("Mul", scope, [y, g.const(scope + "/gamma",
                                       np.ones(H, np.float32), True)])
    return g.op("Add", scope, [y, g.const(scope + "/beta",
                                          np.zeros(H, np.float32), True)])


def dense(g, scope, x, n_in, n_out):
    y = g.op("MatMul", scope, [x, g.weight(scope + "/kernel", n_in, n_out)])
    return g.op("Add", scope, [y, g.weight(scope + "/bias", n_out)])


def heads(g, scope, x, n):
    y = g.op("Reshape", scope, [x, g.ints(scope + "/shape_%d" % g.n,
                                          [B, S, n, D])])
    return g.op("Transpose", scope, [y], perm=[0, 2, 1, 3])


def attention(g, scope, x, mask):
    q = heads(g, scope, dense(g, scope + "/q", x, H, H), HEADS)
    k = heads(g, scope, dense(g, scope + "/k", x, H, KV * D), KV)
    v = heads(g, scope, dense(g, scope + "/v", x, H, KV * D), KV)
    rep = g.ints(scope + "/repeats", [1, 1, HEADS // KV, 1, 1])
    axis = g.ints(scope + "/axis2", [2])
    shape = g.ints(scope + "/merged", [B, HEADS, S, D])
    k, v = [g.op("Reshape", scope, [g.op("Tile", scope, [g.op(
        "Unsqueeze", scope, [t, axis]), rep]), shape]) for t in (k, v)]
    kt = g.op("Transpose", scope, [k], perm=[0, 1, 3, 2])
    a = g.op("MatMul", scope, [q, kt])
    a = g.op("Mul", scope, [a, g.const(scope + "/scale", np.array(
        1 / np.sqrt(D), dtype=np.float32))])
    a = g.op("Softmax", scope, [g.op("Add", scope, [a, mask])], axis=-1)
    y = g.op("Transpose", scope, [g.op("MatMul", scope, [a, v])],
             perm=[0, 2, 1, 3])
    y = g.op("Reshape", scope, [y, g.ints(scope + "/out_shape", [B, S, H])])
    return dense(g, scope + "/proj", y, H, H)


def causal_mask(g):
    sc = "tf_gpt/mask"
    zero, one = g.ints(sc + "/zero", 0), g.ints(sc + "/one", 1)
    n = g.op("Gather", sc, [g.op("Shape", sc, ["input_ids:0"]), one], axis=0)
    r = g.op("Range", sc, [zero, n, one])
    col = g.op("Unsqueeze", sc, [r, g.ints(sc + "/ax0", [0])])
    row = g.op("Unsqueeze", sc, [r, g.ints(sc + "/ax1", [1])])
    keep = g.op("Not", sc, [g.op("Less", sc, [row, col])])
    fill = g.op("ConstantOfShape", sc, [g.ints(sc + "/ss", [S, S])],
                value=numpy_helper.from_array(np.array([-1e9], np.float32)))
    zeros = g.op("ConstantOfShape", sc, [g.ints(sc + "/ss2", [S, S])],
                 value=numpy_helper.from_array(np.array([0], np.float32)))
    return g.op("Where", sc, [keep, zeros, fill])


def write(path):
    g = G()
    mask = causal_mask(g)
    x = g.op("Gather", "tf_gpt/wte", [g.weight("tf_gpt/wte/embeddings", V, H),
                                      "input_ids:0"], axis=0)
    for i in range(LAYERS):
        sc = "tf_gpt/h_._%d" % i
        x = g.op("Add", sc, [x, attention(g, sc + "/attn", layernorm(
            g, sc + "/ln_1", x), mask)])
        y = dense(g, sc + "/mlp/c_fc", layernorm(g, sc + "/ln_2", x), H, 4 * H)
        y = dense(g, sc + "/mlp/c_proj", g.op("Relu", sc + "/mlp", [y]),
                  4 * H, H)
        x = g.op("Add", sc, [x, y])
    x = layernorm(g, "tf_gpt/ln_f", x)
    logits = g.op("MatMul", "tf_gpt/lm_head", [x, g.weight(
        "tf_gpt/lm_head/kernel", H, V)])
    g.nodes.append(helper.make_node("Identity", [logits], ["logits:0"],
                                    name="Identity"))
    graph = helper.make_graph(
        g.nodes, "tf_gpt",
        [helper.make_tensor_value_info("input_ids:0", TensorProto.INT64,
                                       [B, S])],
        [helper.make_tensor_value_info("logits:0", TensorProto.FLOAT,
                                       [B, S, V])])
    model = helper.make_model(graph, producer_name="tf2onnx",
                              opset_imports=[helper.make_opsetid("", 13)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return g.params
