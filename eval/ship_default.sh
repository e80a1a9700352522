#!/usr/bin/env bash
# Ship the default model and rerun the evaluation suite on it. Run from the repository root after
# training (`ggik train --resume train/checkpoints/default ...`). About 30 minutes on 2 CPU cores.
#
#   bash eval/ship_default.sh            # everything
#   STEPS="accuracy seeding" bash eval/ship_default.sh   # a subset, in this order
#   RUN=train/checkpoints/v3 OUT=eval/results/v3 N=200 GEN_N=100 STEPS="export curves accuracy seeding generalisation tables" \
#     bash eval/ship_default.sh          # how model v3 was shipped (about 10 minutes)
#
# Writes ggik/weights/ggik_default.pt, $OUT/* (default eval/results) and $RUN/curves.png, reruns the sampling-time and
# solver studies on the new export (benchmarks/sampling/results, benchmarks/solvers/results), prints the model tables
# beside the GGIK paper's at the end (python -m benchmarks.paper_tables.readme_tables) and writes them to
# $OUT/readme_tables.md.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
RUN=${RUN:-train/checkpoints/default}
N=${N:-2000}
GEN_N=${GEN_N:-200}
OUT=${OUT:-eval/results}
mkdir -p "$OUT"
STEPS=${STEPS:-"export curves accuracy seeding limits generalisation timing solvers tables"}

for step in $STEPS; do
  echo "== $step ($(date -u +%H:%M:%S))"
  case $step in
    export) "$BIN/ggik" export "$RUN/last.pt" ggik/weights/ggik_default.pt ;;
    curves) "$BIN/python" eval/plot_training.py "$RUN" --out "$RUN/curves.png" --fit-after 300000 ;;
    accuracy) "$BIN/ggik" eval accuracy -n "$N" -s 32 --out-dir "$OUT" --no-progress ;;
    seeding) "$BIN/ggik" eval seeding -n "$N" -s 32 --slsqp-goals 10 --out-dir "$OUT" --no-progress ;;
    limits) "$BIN/ggik" eval limits -n 500 -s 32 --out-dir "$OUT" --no-progress ;;
    generalisation) "$BIN/ggik" eval generalisation -n "$GEN_N" -s 32 --family-size 5 --figure --out-dir "$OUT" --no-progress ;;
    timing) "$BIN/python" -m benchmarks.sampling.bench_sampling --ckpt ggik/weights/ggik_default.pt --robots panda ur10 --samples 1 16 256 1024 --dofs 6 18 30 \
              --repeats 1 --threads 2 --max-gb 6 --no-progress ;;
    solvers) "$BIN/python" -m benchmarks.solvers.bench_solvers --ckpt ggik/weights/ggik_default.pt --robots panda ur10 lbr_iiwa --goals 300 --single-goals 30 \
               --slsqp-goals 5 --threads 2 --no-progress ;;
    tables) "$BIN/python" -m benchmarks.paper_tables.readme_tables --results "$OUT" | tee "$OUT/readme_tables.md" ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
