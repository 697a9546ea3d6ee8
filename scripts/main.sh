#!/usr/bin/env bash
# The main job on the data shipped in data/: set up, prepare the sample comments exactly as Keras'
# Tokenizer(num_words=20000) + pad_sequences(maxlen=200) would, and tokenize the seed's sentences.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

attn=build/bin/attn
out=runs/sample
"$attn" prepare --csv data/comments_sample.csv --out "$out"
echo
echo "== $out/prepare.json (excerpt)"
sed -n '/"tokens"/,/"label_positive_rate"/p' "$out/prepare.json" | head -n -1
echo
echo "== word indices of the seed's sentences (attn tokenize --maxlen 8)"
printf '%s\n' "ice cream" "ice cream is worthless" "ice cream sucks" |
  "$attn" tokenize --tokenizer "$out/tokenizer.json" --maxlen 8
