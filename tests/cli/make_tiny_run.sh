#!/usr/bin/env bash
# Test fixture: a generated toxic-comment CSV and a small bilstm-attention run trained on it.
# usage: make_tiny_run.sh ATTN DIR
set -euo pipefail
attn=$1 dir=$2
rm -rf "$dir"
mkdir -p "$dir"
"$attn" datagen toxic --rows 3000 --seed 5 --out "$dir/toxic.csv"
"$attn" train --csv "$dir/toxic.csv" --out "$dir/run" --epochs 2 --batch-size 64 \
  --set embed_dim=16 --set lstm_units=8 --threads 2
