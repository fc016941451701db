"""Small PyTorch models written out as their papers describe them, for the
exporter's tests: a GPT (learned positions, pre-LN, GELU MLP, tied head),
a LLaMA-like decoder (RMSNorm, rotary positions, grouped-query attention,
SwiGLU), a BERT encoder (post-LN, token types, MLM head) and a ViT (patch
embedding by a strided conv, class token, learned positions)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, h, heads, kv_heads=None, causal=True, bias=True,
                 rope=False, max_seq=64):
        super().__init__()
        self.h, self.nh = h, heads
        self.kv = kv_heads or heads
        self.d = h // heads
        self.q = nn.Linear(h, heads * self.d, bias=bias)
        self.k = nn.Linear(h, self.kv * self.d, bias=bias)
        self.v = nn.Linear(h, self.kv * self.d, bias=bias)
        self.o = nn.Linear(heads * self.d, h, bias=bias)
        self.causal, self.rope = causal, rope
        if causal:
            self.register_buffer(
                "mask", torch.tril(torch.ones(max_seq, max_seq)).view(
                    1, 1, max_seq, max_seq))

    def heads(self, x, n):
        b, s, _ = x.shape
        return x.view(b, s, n, self.d).transpose(1, 2)

    def rotate(self, x):
        half = self.d // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat((-x2, x1), dim=-1)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.heads(self.q(x), self.nh)
        k = self.heads(self.k(x), self.kv)
        v = self.heads(self.v(x), self.kv)
        if self.rope:
            q = q + self.rotate(q)
            k = k + self.rotate(k)
        if self.kv != self.nh:
            rep = self.nh // self.kv
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        att = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(self.d))
        if self.causal:
            att = att.masked_fill(self.mask[:, :, :s, :s] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, s, self.nh * self.d)
        return self.o(y)


class GPTBlock(nn.Module):
    def __init__(self, h, heads, max_seq):
        super().__init__()
        self.ln1 = nn.LayerNorm(h)
        self.attn = Attention(h, heads, max_seq=max_seq)
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * h, h)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = x + self.drop(self.attn(self.ln1(x)))
        return x + self.drop(self.fc2(self.act(self.fc1(self.ln2(x)))))


class GPT(nn.Module):
    def __init__(self, vocab=512, h=128, heads=4, layers=4, max_seq=64):
        super().__init__()
        self.wte = nn.Embedding(vocab, h)
        self.wpe = nn.Embedding(max_seq, h)
        self.blocks = nn.ModuleList(
            [GPTBlock(h, heads, max_seq) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(h)
        self.head = nn.Linear(h, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied

    def forward(self, idx):
        pos = torch.arange(idx.shape[1])
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


class RMSNorm(nn.Module):
    def __init__(self, h, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * \
            self.weight


class LlamaBlock(nn.Module):
    def __init__(self, h, heads, kv, ffn, max_seq):
        super().__init__()
        self.norm1 = RMSNorm(h)
        self.attn = Attention(h, heads, kv, bias=False, rope=True,
                              max_seq=max_seq)
        self.norm2 = RMSNorm(h)
        self.gate = nn.Linear(h, ffn, bias=False)
        self.up = nn.Linear(h, ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        y = self.norm2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Llama(nn.Module):
    def __init__(self, vocab=512, h=128, heads=4, kv=2, ffn=352, layers=4,
                 max_seq=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, h)
        self.layers = nn.ModuleList(
            [LlamaBlock(h, heads, kv, ffn, max_seq) for _ in range(layers)])
        self.norm = RMSNorm(h)
        self.lm_head = nn.Linear(h, vocab, bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


class BertLayer(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.attn = Attention(h, heads, causal=False)
        self.ln1 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)
        self.ln2 = nn.LayerNorm(h)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = self.ln1(x + self.drop(self.attn(x)))
        return self.ln2(x + self.drop(self.fc2(F.gelu(self.fc1(x)))))


class Bert(nn.Module):
    def __init__(self, vocab=512, h=128, heads=4, layers=4, max_seq=64):
        super().__init__()
        self.word = nn.Embedding(vocab, h)
        self.pos = nn.Embedding(max_seq, h)
        self.tok_type = nn.Embedding(2, h)
        self.ln = nn.LayerNorm(h)
        self.encoder = nn.ModuleList([BertLayer(h, heads) for _ in range(layers)])
        self.mlm_dense = nn.Linear(h, h)
        self.mlm_ln = nn.LayerNorm(h)
        self.decoder_bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, idx, types):
        pos = torch.arange(idx.shape[1])
        x = self.ln(self.word(idx) + self.pos(pos) + self.tok_type(types))
        for layer in self.encoder:
            x = layer(x)
        y = self.mlm_ln(F.gelu(self.mlm_dense(x)))
        return F.linear(y, self.word.weight, self.decoder_bias)


class ViTBlock(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(h)
        self.attn = Attention(h, heads, causal=False)
        self.ln2 = nn.LayerNorm(h)
        self.fc1 = nn.Linear(h, 4 * h)
        self.fc2 = nn.Linear(4 * h, h)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self, image=32, patch=8, h=128, heads=4, layers=4,
                 classes=10):
        super().__init__()
        n = (image // patch) ** 2
        self.patch = nn.Conv2d(3, h, kernel_size=patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, h))
        self.pos = nn.Parameter(torch.zeros(1, n + 1, h))
        self.blocks = nn.ModuleList([ViTBlock(h, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(h)
        self.head = nn.Linear(h, classes)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        cls = self.cls.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x)[:, 0])


def examples(batch=2, seq=64):
    """(name, module, example inputs) of each test model."""
    torch.manual_seed(0)
    tok = torch.randint(0, 512, (batch, seq))
    return [
        ("gpt", GPT(), (tok,)),
        ("llama", Llama(), (tok,)),
        ("bert", Bert(), (tok, torch.zeros(batch, seq, dtype=torch.long))),
        ("vit", ViT(), (torch.randn(batch, 3, 32, 32),)),
    ]
