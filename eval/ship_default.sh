#!/usr/bin/env bash
# The evaluation suite of the shipped model: one folder per table under eval/results/, the tables the README quotes.
# Run from the repository root, alone on the machine (the tables hold timings). About 40 minutes on a 2-core CPU
# without native bf16, 9 on the 2-core AVX512 one of stop 34.
#
#   bash eval/ship_default.sh                                   # the whole suite on ggik/weights/ggik_default.pt
#   STEPS="accuracy seeding" bash eval/ship_default.sh          # a subset, in this order
#   RUN=runs/NAME STEPS="export curves accuracy seeding generalisation goals conventions paths" bash eval/ship_default.sh
#                                                               # ship a finished run: export it first, then measure
#
# export: RUN/last.pt -> ggik/weights/ggik_default.pt (weights only, `ggik export`) and RUN/export.pt;
# curves: RUN/curves.png. Every table records its command, the model (file, sha256 prefix, step) and the code
# version (git describe) in its header: commit before running, so the version names committed code.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
N=${N:-200}
DEST=${OUT:-eval/results}
STEPS=${STEPS:-"accuracy seeding generalisation goals conventions paths"}
# The tables are written outside the checkout first, so that `git describe --dirty` in their headers sees the code
# as committed (files of eval/results being rewritten would mark it dirty), then moved to DEST with the output
# folder named as DEST in their commands.
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
publish() {  # publish STEP_FOLDER: DEST/STEP_FOLDER <- OUT/STEP_FOLDER
  mkdir -p "$DEST/$1"
  cp -r "$OUT/$1/." "$DEST/$1/"
  grep -rl --include='*.md' "$OUT" "$DEST/$1" | xargs -r sed -i "s#$OUT#$DEST#g"
}

for step in $STEPS; do
  echo "== $step ($(date -u +%H:%M:%S))"
  case $step in
    export) "$BIN/ggik" export "${RUN:?RUN=run folder}/last.pt" "$RUN/export.pt"
            cp "$RUN/export.pt" ggik/weights/ggik_default.pt ;;
    curves) "$BIN/python" eval/plot_training.py "${RUN:?RUN=run folder}" --out "$RUN/curves.png" ;;
    accuracy) "$BIN/ggik" eval accuracy -n "$N" -s 32 --out-dir "$OUT/accuracy" --no-progress ;;
    seeding) "$BIN/ggik" eval seeding -n "$N" -s 32 --slsqp-goals 10 --out-dir "$OUT/seeding" --no-progress ;;
    limits) "$BIN/ggik" eval limits -n "$N" -s 32 --out-dir "$OUT/limits" --no-progress ;;
    generalisation) "$BIN/ggik" eval generalisation -n 100 -s 32 --family-size 5 --figure \
                      --out-dir "$OUT/generalisation" --no-progress ;;
    goals) "$BIN/ggik" eval goals --robots panda ur10 lbr_iiwa kr16_2 -n "$N" -s 32 --out-dir "$OUT/goal_kinds" \
             --no-progress ;;
    conventions) "$BIN/ggik" eval conventions -n "$N" -s 32 --out-dir "$OUT/conventions" --no-progress ;;
    paths) "$BIN/ggik" eval paths --time-limit 5 --out-dir "$OUT/paths" --no-progress ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
for step in $STEPS; do  # after every table is written: a table published earlier would make the next one "dirty"
  case $step in
    accuracy|seeding|limits|generalisation|conventions|paths) publish "$step" ;;
    goals) publish goal_kinds ;;
  esac
done
