#!/usr/bin/env python3
"""A small GPT (token and position embeddings, pre-norm blocks of causal
self-attention written as matmuls and a softmax or as nn.MultiheadAttention,
a GELU MLP, a final norm, a tied or untied head), exported with
torch.onnx.export.

    gpt.py OUT.onnx --opset 17 [--untied] [--mha] [--layers 2] [--params FILE]

writes the model and, with --params, sum(p.numel()) of its parameters (a
tied head's weight counted once, as torch's parameters() yields it once)."""

import argparse
import math

import torch
import torch.nn as nn

VOCAB, SEQ, HIDDEN, HEADS, BATCH = 512, 32, 64, 4, 2


class Block(nn.Module):
    def __init__(self, h, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.ln_2 = nn.LayerNorm(h)
        self.fc = nn.Linear(h, 4 * h)
        self.act = nn.GELU()
        self.out = nn.Linear(4 * h, h)
        # a buffer, not a parameter: the importer must not count it
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def attn(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(x).split(h, dim=2)
        q = q.view(b, s, self.heads, d).transpose(1, 2)
        k = k.view(b, s, self.heads, d).transpose(1, 2)
        v = v.view(b, s, self.heads, d).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        att = att.masked_fill(self.mask[:, :, :s, :s] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, s, h)
        return self.proj(y)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.out(self.act(self.fc(self.ln_2(x))))


class MhaBlock(nn.Module):
    """The same block with nn.MultiheadAttention and an nn.Sequential MLP."""

    def __init__(self, h, heads, seq):
        super().__init__()
        self.ln_1 = nn.LayerNorm(h)
        self.attn = nn.MultiheadAttention(h, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(h)
        self.mlp = nn.Sequential(nn.Linear(h, 4 * h), nn.GELU(),
                                 nn.Linear(4 * h, h))
        self.register_buffer(
            "mask", torch.triu(torch.full((seq, seq), float("-inf")), 1))

    def forward(self, x):
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, attn_mask=self.mask, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, seq, h, heads, layers, tied, mha=False,
                 arange=False):
        super().__init__()
        # arange: positions as wpe(arange(s)), which the exporter's constant
        # folding writes as one [s, h] initializer added to the embedding
        self.arange = arange
        self.wte = nn.Embedding(vocab, h)
        self.wpe = nn.Embedding(seq, h)
        blk = MhaBlock if mha else Block
        self.h = nn.ModuleList(blk(h, heads, seq) for _ in range(layers))
        self.ln_f = nn.LayerNorm(h)
        self.head = nn.Linear(h, vocab, bias=False)
        if tied:
            self.head.weight = self.wte.weight
        self.register_buffer("pos", torch.arange(seq).unsqueeze(0))

    def forward(self, idx):
        s = idx.shape[1]
        pos = torch.arange(s) if self.arange else self.pos[:, :s]
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.h:
            x = blk(x)
        return self.head(self.ln_f(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--untied", action="store_true")
    ap.add_argument("--mha", action="store_true")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--params")
    a = ap.parse_args()
    torch.manual_seed(0)
    m = GPT(VOCAB, SEQ, HIDDEN, HEADS, a.layers, not a.untied, a.mha).eval()
    idx = torch.randint(0, VOCAB, (BATCH, SEQ))
    torch.onnx.export(m, (idx,), a.out, opset_version=a.opset,
                      input_names=["input_ids"], output_names=["logits"])
    if a.params:
        with open(a.params, "w") as f:
            f.write("%d\n" % sum(p.numel() for p in m.parameters()))


if __name__ == "__main__":
    main()
