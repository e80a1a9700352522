#!/usr/bin/env bash
# Ship the default model and rerun the evaluation suite on it (issue 6). Run from the repository root after
# training (`ggik train --resume train/checkpoints/default ...`). About 30 minutes on 2 CPU cores.
#
#   bash eval/ship_default.sh            # everything
#   STEPS="accuracy seeding" bash eval/ship_default.sh   # a subset, in this order
#
# Writes ggik/weights/ggik_default.pt, eval/results/* and train/checkpoints/default/curves.png; prints the
# README's model tables at the end (python eval/readme_tables.py).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
RUN=${RUN:-train/checkpoints/default}
N=${N:-2000}
STEPS=${STEPS:-"export curves accuracy seeding limits generalisation timing solvers tables"}

for step in $STEPS; do
  echo "== $step ($(date -u +%H:%M:%S))"
  case $step in
    export) "$BIN/ggik" export "$RUN/last.pt" ggik/weights/ggik_default.pt ;;
    curves) "$BIN/python" eval/plot_training.py "$RUN" --out "$RUN/curves.png" --fit-after 300000 ;;
    accuracy) "$BIN/ggik" eval accuracy -n "$N" -s 32 --no-progress ;;
    seeding) "$BIN/ggik" eval seeding -n "$N" -s 32 --slsqp-goals 10 --no-progress ;;
    limits) "$BIN/ggik" eval limits -n 500 -s 32 --no-progress ;;
    generalisation) "$BIN/ggik" eval generalisation -n 200 -s 32 --family-size 5 --figure --no-progress ;;
    timing) "$BIN/python" eval/bench_sampling.py --ckpt ggik/weights/ggik_default.pt --robots panda ur10 --samples 1 16 256 1024 --dofs 6 18 30 \
              --repeats 1 --threads 2 --max-gb 6 --no-progress ;;
    solvers) "$BIN/python" eval/bench_solvers.py --ckpt ggik/weights/ggik_default.pt --robots panda ur10 lbr_iiwa --goals 300 --single-goals 30 \
               --slsqp-goals 5 --threads 2 --no-progress ;;
    tables) "$BIN/python" eval/readme_tables.py ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
