#!/usr/bin/env bash
# The paper model's width (64, ours, or 128, the paper's), chosen on curves at equal compute (issue 61): the paper
# config (train/configs/paper.yaml) trained from scratch at each width for the same CPU-minutes, one thread, at nice
# 19, validated on the paper's goals (100 per arm, every 50 steps). Run from the repository root:
#   STUDY=runs/width MINUTES=12 bash benchmarks/training_speed/width_study.sh
# then compare per CPU-minute and per example:
#   python -m benchmarks.training_speed.equal_examples --axis cpu --runs 64=$STUDY/width64 128=$STUDY/width128 ...
set -euo pipefail
STUDY=${STUDY:-runs/width}
MINUTES=${MINUTES:-12}
WIDTHS=${WIDTHS:-"64 128"}
BIN=${BIN:-.venv/bin}
for w in $WIDTHS; do
  run="$STUDY/width$w"
  [ -f "$run/done" ] && continue
  rm -rf "$run"
  nice -n 19 env OMP_NUM_THREADS=1 "$BIN/ggik" train --config train/configs/paper.yaml --out "$run" --no-progress \
    --max-cpu-minutes "$MINUTES" --set model.dim="$w" --set cpu_micro_batch=32 --set val.every=50 \
    --set val.protocol=paper --set val.problems_per_robot=100 --set checkpoint_every=1000 > "$run.log" 2>&1
  touch "$run/done"
done
