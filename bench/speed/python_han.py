#!/usr/bin/env python3
"""The Python peer of attn's hierarchical-attention: a Hierarchical Attention Network written the way
the widely used PyTorch HAN tutorials write it. Documents are padded to [max_sentences, max_words];
the word level packs the batch's non-empty sentences (pack_padded_sequence, enforce_sorted=False)
through a bidirectional nn.GRU, the sentence level packs each document's sentences the same way;
attention is u = tanh(W h + b), alpha = masked softmax(u^T u_w). The sizes of attn's run (its
config.json: embedding, GRU units per direction, attention 2 x units), Adam 1e-3, BCE with logits,
dropout 0.2 on the embeddings, batches of 64.

It reads the ids attn itself wrote (RUN/data/data.pt: each word carries its sentence, word + 2^20 x
sentence), so both sides train on the same documents cut the same way, and times EPOCHS epochs over
the training rows (all but the run's validation split, shuffled), the input tensors built before
the clock starts; the last epoch's time is the figure (the first pays one-off warm-up, as attn's).

usage: python_han.py RUN_DIR THREADS [EPOCHS]  -> prints {"seconds_per_epoch": ..., "rows": ..., "loss": ...}
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import peer_usage  # noqa: E402

peer_usage(__doc__, 2)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.mlp = nn.Linear(dim, dim)
        self.context = nn.Linear(dim, 1, bias=False)

    def forward(self, h, mask):
        scores = self.context(torch.tanh(self.mlp(h))).squeeze(-1)
        alpha = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1).masked_fill(~mask, 0.0)
        return (h * alpha.unsqueeze(-1)).sum(1), alpha


class HAN(nn.Module):
    def __init__(self, vocab, labels, embed=200, units=50):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed, padding_idx=0)
        self.word_gru = nn.GRU(embed, units, batch_first=True, bidirectional=True)
        self.word_attention = Attention(2 * units)
        self.sentence_gru = nn.GRU(2 * units, units, batch_first=True, bidirectional=True)
        self.sentence_attention = Attention(2 * units)
        self.dropout = nn.Dropout(0.2)
        self.out = nn.Linear(2 * units, labels)

    def forward(self, docs, sentence_lengths, doc_lengths):
        # docs [B, S, W], sentence_lengths [B, S], doc_lengths [B]
        B, S, W = docs.shape
        flat = docs.view(B * S, W)
        lengths = sentence_lengths.view(-1)
        real = lengths > 0
        words = self.dropout(self.embedding(flat[real]))
        packed = pack_padded_sequence(words, lengths[real].cpu(), batch_first=True, enforce_sorted=False)
        h, _ = pad_packed_sequence(self.word_gru(packed)[0], batch_first=True, total_length=W)
        mask = torch.arange(W).unsqueeze(0) < lengths[real].unsqueeze(1)
        s, _ = self.word_attention(h, mask)
        sentences = torch.zeros(B * S, s.size(1))
        sentences[real] = s
        sentences = sentences.view(B, S, -1)
        packed = pack_padded_sequence(sentences, doc_lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
        hs, _ = pad_packed_sequence(self.sentence_gru(packed)[0], batch_first=True, total_length=S)
        v, _ = self.sentence_attention(hs, sentence_lengths > 0)
        return self.out(v)


def documents(ids, max_sentences, max_words):
    """attn's rows (word + 2^20 x sentence) as padded documents [rows, S, W] with their lengths."""
    rows = ids.shape[0]
    docs = torch.zeros(rows, max_sentences, max_words, dtype=torch.int64)
    sentence_lengths = torch.zeros(rows, max_sentences, dtype=torch.int64)
    for r in range(rows):
        for v in ids[r].tolist():
            if v == 0:
                continue
            s, w = v >> 20, v & ((1 << 20) - 1)
            docs[r, s, sentence_lengths[r, s]] = w
            sentence_lengths[r, s] += 1
    return docs, sentence_lengths, (sentence_lengths > 0).sum(1)


def main():
    run, threads = sys.argv[1], int(sys.argv[2])
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    config = json.load(open(f"{run}/config.json"))
    layout = config["data"]["sentences"]
    prepared = torch.load(f"{config['data']['dir']}/data.pt")
    x, y = prepared["x"].to(torch.int64), prepared["labels"].to(torch.float32)
    train = int(x.shape[0] * (1 - config["training"]["val_split"]))
    docs, sentence_lengths, doc_lengths = documents(x[:train], layout["max_sentences"], layout["max_words"])
    mc = config["model_config"]
    model = HAN(mc["num_words"], y.shape[1], embed=mc["embed_dim"], units=mc["gru_units"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = config["training"]["batch_size"]
    model.train()
    for _ in range(epochs):
        order = torch.randperm(train)
        t0 = time.perf_counter()
        total = 0.0
        for first in range(0, train, batch):
            rows = order[first:first + batch]
            logits = model(docs[rows], sentence_lengths[rows], doc_lengths[rows])
            loss = F.binary_cross_entropy_with_logits(logits, y[:train][rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(rows)
        seconds = time.perf_counter() - t0
    print(json.dumps({"seconds_per_epoch": seconds, "rows": train, "loss": total / train, "threads": threads, "epochs": epochs}))


if __name__ == "__main__":
    main()
