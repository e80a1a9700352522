#!/usr/bin/env bash
# Issue 56's question "train on the paper's protocol too?", measured: the handedness run (runs/handedness, 40
# CPU-minutes, train/checkpoints/handedness) continued in two copies for 25 more CPU-minutes each, one thread each, side
# by side, with the same data stream except that one draws a share of its configurations in [-pi, pi] on every joint,
# ignoring the limits (data.unlimited_fraction, the paper's protocol):
#   cp -r runs/handedness runs/handedness_cont; cp -r runs/handedness runs/handedness_unl
#   ggik train --resume runs/handedness_cont --max-cpu-minutes 65
#   ggik train --resume runs/handedness_unl --set data.unlimited_fraction=0.3 --max-cpu-minutes 65
# Then, alone on the machine (from the repository root):
#   bash benchmarks/handedness/measure_unlimited.sh [OUT]      (OUT: benchmarks/handedness/results/unlimited)
# 1. both runs' validation curves (our protocol: within the limits) per CPU-minute;
# 2. each run's export on the GGIK paper's protocol (300 goals per arm, its five arms) and on ours (200 goals per arm,
#    the nine arms), as benchmarks/handedness/measure.sh measured v10 and the handedness model.
set -euo pipefail
out=${1:-benchmarks/handedness/results/unlimited}
mkdir -p "$out"
python -m benchmarks.handedness.curves runs/handedness_cont runs/handedness_unl --names within unlimited_0.3 \
  --out "$out/curves"
for name in cont unl; do
  python -m ggik.cli export "runs/handedness_$name/last.pt" "$out/export_$name.pt"
  python -m ggik.cli eval paper --ckpt "$out/export_$name.pt" -n 300 -s 32 --threads 2 --no-progress \
    --out-dir "$out/paper_$name"
  python -m ggik.cli eval accuracy --ckpt "$out/export_$name.pt" -n 200 -s 32 --mmd-goals 1 --slsqp-goals 1 \
    --threads 2 --no-progress --out-dir "$out/accuracy_$name"
done
