#!/usr/bin/env bash
# Issue 56's measurements of a model that reads handedness against the shipped v10, one after the other, alone on the
# machine (from the repository root):
#   bash benchmarks/handedness/measure.sh MODEL.pt [OUT]      (OUT: benchmarks/handedness/results)
# 1. the runs' validation curves per CPU-minute (runs/handedness and runs/handedness_control, v10 at minute 0);
# 2. the per-arm study: DG from random starts with and without volumes, each model raw, + DG, + LM;
# 3. the GGIK paper's protocol (300 goals per arm) and our protocol (200 goals per arm, the nine arms), both models.
set -euo pipefail
model=${1:?usage: measure.sh MODEL.pt [OUT]}
out=${2:-benchmarks/handedness/results}
v10=ggik/weights/ggik_default.pt
mkdir -p "$out"
if [[ -d runs/handedness && -d runs/handedness_control ]]; then
  python -m benchmarks.handedness.curves runs/handedness runs/handedness_control --names handed control \
    --start "$v10" --out "$out/curves"
fi
python -m benchmarks.handedness.study --models "v10=$v10" "handed=$model" --goals 100 --samples 32 --threads 2 \
  --out "$out/study"
for name in v10 handed; do
  ckpt=$v10; [[ $name == handed ]] && ckpt=$model
  python -m ggik.cli eval paper --ckpt "$ckpt" -n 300 -s 32 --threads 2 --no-progress --out-dir "$out/paper_$name"
  python -m ggik.cli eval accuracy --ckpt "$ckpt" -n 200 -s 32 --mmd-goals 1 --slsqp-goals 1 --threads 2 \
    --no-progress --out-dir "$out/accuracy_$name"
done
