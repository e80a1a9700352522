#!/usr/bin/env bash
# The learning rate at a large batch, chosen on curves at equal examples (issue 61): branches of one resumable run,
# each resumed with another batch and learning rate for the same number of examples, one thread each, at nice 19.
# Run from the repository root:
#   BASE=train/checkpoints/paper STUDY=runs/lr_batch EXAMPLES=204800 bash benchmarks/training_speed/lr_batch_study.sh
# BASE: a run folder with last.pt (copied, never written); each branch is "b<batch>_lr<lr>" under STUDY, resumed
# from BASE's step for EXAMPLES examples (steps = EXAMPLES / batch), in passes of 32 on the CPU, logging every
# 10,240 examples and validating every 51,200 on BASE's validation goals. Then compare them:
#   python -m benchmarks.training_speed.equal_examples --since-step STEP --runs "512, 3e-4=$STUDY/b512_lr3e-4" ...
set -euo pipefail
BASE=${BASE:-train/checkpoints/paper}
STUDY=${STUDY:-runs/lr_batch}
EXAMPLES=${EXAMPLES:-204800}
BRANCHES=${BRANCHES:-"512:3e-4 2048:3e-4 2048:6e-4 2048:1.2e-3"}
BIN=${BIN:-.venv/bin}
step=$("$BIN/python" -c "import sys, torch; print(torch.load(sys.argv[1], map_location='cpu', weights_only=False)['step'])" "$BASE/last.pt")
for branch in $BRANCHES; do
  batch=${branch%%:*}; lr=${branch##*:}
  run="$STUDY/b${batch}_lr${lr}"
  [ -f "$run/done" ] && continue
  rm -rf "$run"; mkdir -p "$run"
  cp "$BASE"/{last.pt,config.yaml,metrics.jsonl} "$run/"
  cp "$BASE"/val_problems*.pt "$run/" 2>/dev/null || true
  nice -n 19 env OMP_NUM_THREADS=1 "$BIN/ggik" train --resume "$run" --no-progress \
    --set steps=$((step + EXAMPLES / batch)) --set data.batch_size="$batch" --set optim.lr="$lr" \
    --set cpu_micro_batch=32 --set log_every=$((10240 / batch)) --set val.every=$((51200 / batch)) \
    --set checkpoint_every=1000 > "$run.log" 2>&1
  touch "$run/done"
done
echo "branched from step $step of $BASE"
