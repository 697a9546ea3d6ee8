#!/usr/bin/env bash
# The main job (seed 000) on the data shipped in data/: set up, train the BiLSTM + word-attention
# model on 20,000 generated Kaggle-format toxic comments, then ask it which words made the seed's
# sentences toxic, by attention and by integrated gradients.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase.sh
echo "attn's main job: install what is missing, build the library and 3 commands, train on data/toxic_sample.csv,"
echo "explain 5 sentences. On a fresh 2-core machine about 5-6 min, most of it compiling; again, seconds plus training."
bash scripts/setup.sh main

attn=build/bin/attn
run=runs/toxic
rm -rf "$run"
phase train "bilstm-attention on 20,000 comments, 3 epochs (about 40 s on 2 cores)"
# Keras' Tokenizer(num_words=20000) + pad_sequences(maxlen=200), the last 20% held out; batch 64
# (the seed's 512 suits its 160k rows; 20k rows need more, smaller steps).
"$attn" train --csv data/toxic_sample.csv --model bilstm-attention --epochs 3 --batch-size 64 --out "$run"
phase_done
echo
phase explain "5 sentences, attention and integrated gradients"
# Each word's attention beside its integrated gradients (for the most probable label): attention says
# where the model looked, integrated gradients what moved its logit (docs/importance.md).
"$attn" explain --model "$run" --methods attention,integrated-gradients --html "$run/explain.html" \
  "ice cream" "ice cream is worthless" "ice cream sucks" "Thanks for fixing the citation, good work." \
  "You are a stupid idiot and your edits are garbage"
phase_done
echo "(the same, highlighted: $run/explain.html; in Python: torch.jit.load(\"$run/model.pt\"))"
