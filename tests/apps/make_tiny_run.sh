#!/usr/bin/env bash
# Test fixture: a generated toxic-comment CSV and a small bilstm-attention run trained on it; small
# runs of the other models.
# usage: make_tiny_run.sh ATTN DIR
set -euo pipefail
attn=$1 dir=$2
rm -rf "$dir"
mkdir -p "$dir"
"$attn" datagen toxic --rows 3000 --seed 5 --out "$dir/toxic.csv"
"$attn" train --csv "$dir/toxic.csv" --out "$dir/run" --epochs 2 --batch-size 64 \
  --set embed_dim=16 --set lstm_units=8 --threads 2
# The other seeds' systems, small: feature attention (001), dates (002), a Transformer classifier (003).
"$attn" datagen features --rows 6000 --dims 6 --informative 1,2 --seed 5 --out "$dir/features.csv"
"$attn" train --model feature-attention --csv "$dir/features.csv" --out "$dir/features" --epochs 8 --batch-size 64 \
  --lr 0.01 --threads 2
# (dates: trained to about 88% exact match, where beam search has room to differ from greedy decoding)
"$attn" datagen dates --rows 6000 --seed 5 --out "$dir/dates.csv"
"$attn" train --model seq2seq-attention --csv "$dir/dates.csv" --source-column human --target-column machine \
  --out "$dir/dates" --epochs 2 --batch-size 32 --lr 0.005 --set units=32 --set embed_dim=16 --threads 2
"$attn" train --model transformer-classifier --csv "$dir/toxic.csv" --out "$dir/transformer" --epochs 1 \
  --batch-size 64 --set d_model=16 --set heads=2 --set feedforward=32 --threads 2
# Hierarchical attention (Yang et al.) on e-mail-like documents whose labels one sentence carries,
# with held-out documents of another seed.
"$attn" datagen documents --rows 2000 --seed 5 --out "$dir/documents.csv"
"$attn" datagen documents --rows 400 --seed 6 --out "$dir/documents_heldout.csv"
"$attn" train --model hierarchical-attention --csv "$dir/documents.csv" --out "$dir/hierarchical" --epochs 15 --lr 0.005 \
  --set embed_dim=32 --set gru_units=16 --threads 2
# A span tagger on posts in Toxic Spans' layout (an insult's letters or a threat marked).
"$attn" datagen spans --rows 1500 --seed 5 --out "$dir/spans.csv"
"$attn" train --csv "$dir/spans.csv" --text-column text --spans-column spans --out "$dir/tagger" --epochs 3 \
  --set embed_dim=16 --set lstm_units=8 --pretrain-epochs 0 --lr 0.01 --threads 2
