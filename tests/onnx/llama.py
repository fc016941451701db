#!/usr/bin/env python3
"""A small LLaMA-style model written as Hugging Face's modelling code
writes it (by hand here, nothing downloaded): RMSNorm, rotary positions
from an inv_freq buffer (cos and sin tables built in forward), grouped-
query attention, a causal mask built in forward (torch.full, arange,
masked_fill, expand), and a SwiGLU MLP or a small top-2 mixture of
experts; exported with torch.onnx.export (TorchScript; torch 1.13 has no
dynamo exporter).

The key/value heads are repeated for the query heads in one of three
forms (kv=):
  expand      transformers' repeat_kv: x[:, :, None].expand(..).reshape(..)
  tile        x[:, :, None].repeat(..).reshape(..): ONNX Tile, the form
              later torch exporters write for repeat_interleave
  interleave  torch.repeat_interleave(x, n, dim=1), which torch 1.13
              exports as a Reshape whose 0s ONNX reads as other dims
              (pytorch/pytorch#128505): an invalid file

The MoE layer routes each token to its top 2 of 4 SwiGLU experts: softmax,
TopK, the weights scattered into a dense gate (ScatterElements), every
expert computed and weighted (shapes fixed, as an export needs); moe=
"gather" routes as transformers' Mixtral does instead (GatherMoE)."""

import math

import torch
import torch.nn as nn

VOCAB, SEQ, HIDDEN, HEADS, KV_HEADS, BATCH = 512, 32, 64, 4, 2, 2
HEAD = HIDDEN // HEADS


class RMSNorm(nn.Module):
    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        v = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(v + self.eps))


def rotate_half(x):
    x1, x2 = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n, form):
    b, k, s, d = x.shape
    if form == "interleave":
        return torch.repeat_interleave(x, n, dim=1)
    if form == "tile":
        return x[:, :, None].repeat(1, 1, n, 1, 1).reshape(b, k * n, s, d)
    return x[:, :, None, :, :].expand(b, k, n, s, d).reshape(b, k * n, s, d)


class Attention(nn.Module):
    def __init__(self, form):
        super().__init__()
        self.form = form
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD, bias=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD, bias=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD, HIDDEN, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, HEAD, 2).float() / HEAD))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, x, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, HEADS, HEAD).transpose(1, 2)
        k = self.k_proj(x).view(b, s, KV_HEADS, HEAD).transpose(1, 2)
        v = self.v_proj(x).view(b, s, KV_HEADS, HEAD).transpose(1, 2)
        t = torch.arange(s, dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = repeat_kv(k, HEADS // KV_HEADS, self.form)
        v = repeat_kv(v, HEADS // KV_HEADS, self.form)
        a = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(HEAD) + mask
        a = torch.softmax(a, dim=-1)
        y = torch.matmul(a, v).transpose(1, 2).reshape(b, s, HIDDEN)
        return self.o_proj(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, 2 * HIDDEN, bias=False)
        self.up_proj = nn.Linear(HIDDEN, 2 * HIDDEN, bias=False)
        self.down_proj = nn.Linear(2 * HIDDEN, HIDDEN, bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) *
                              self.up_proj(x))


class MoE(nn.Module):
    def __init__(self, experts=4, topk=2):
        super().__init__()
        self.topk = topk
        self.gate = nn.Linear(HIDDEN, experts, bias=False)
        self.experts = nn.ModuleList(MLP() for _ in range(experts))

    def forward(self, x):
        p = torch.softmax(self.gate(x), dim=-1)
        w, i = torch.topk(p, self.topk, dim=-1)
        g = torch.zeros_like(p).scatter(-1, i, w / w.sum(-1, keepdim=True))
        y = 0
        for e, expert in enumerate(self.experts):
            y = y + g[..., e:e + 1] * expert(x)
        return y


class GatherMoE(MoE):
    """Each expert computes only its routed tokens, as transformers'
    Mixtral does (torch.where of the expert mask, index_add): shapes that
    depend on the routing (NonZero)."""

    def forward(self, x):
        b, s, h = x.shape
        x = x.view(-1, h)
        p = torch.softmax(self.gate(x), dim=-1)
        w, sel = torch.topk(p, self.topk, dim=-1)
        out = torch.zeros_like(x)
        mask = nn.functional.one_hot(sel, len(self.experts)).permute(2, 1, 0)
        for e, expert in enumerate(self.experts):
            slot, tok = torch.where(mask[e])
            out = out.index_add(0, tok, expert(x[tok]) * w[tok, slot, None])
        return out.view(b, s, h)


class Layer(nn.Module):
    def __init__(self, form, moe):
        super().__init__()
        self.input_layernorm = RMSNorm(HIDDEN)
        self.self_attn = Attention(form)
        self.post_attention_layernorm = RMSNorm(HIDDEN)
        self.mlp = GatherMoE() if moe == "gather" else MoE() if moe else MLP()

    def forward(self, x, mask):
        x = x + self.self_attn(self.input_layernorm(x), mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    def __init__(self, form="expand", moe=False, layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList(Layer(form, moe) for _ in range(layers))
        self.norm = RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, ids):
        b, s = ids.shape
        mask = torch.full((s, s), torch.finfo(torch.float32).min)
        c = torch.arange(s)
        mask = mask.masked_fill(c < (c + 1).view(s, 1), 0.0)
        mask = mask[None, None].expand(b, 1, s, s)
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, mask)
        return self.lm_head(self.norm(x))
