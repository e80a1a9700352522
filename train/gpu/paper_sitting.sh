#!/usr/bin/env bash
# One call of a lent GPU for issue 61 (train/gpu/README.md, "The paper sitting"), from the repository root of a copy:
#   bash train/gpu/paper_sitting.sh [MINUTES]       (default 9.5: a call of the device tool runs at most 600 s)
# Its phases, in order, each capped by what is left of MINUTES:
#   checks  train/gpu/device_checks.sh, the short one (at most 3 minutes);
#   sweep   training examples/s against batch size 512 to 32,768 on CUDA with compile default, the host syncs per step
#           and the peak memory per size (benchmarks/training_speed/batch_sweep.py; no size started after 180 s, at
#           most 4 minutes);
#   train   the paper run (RUN, default train/checkpoints/paper) resumed in $OUT itself (its last.pt, config.yaml,
#           metrics.jsonl and validation sets copied there first) with compile default and all host threads, at batch
#           BATCH (default 2048) and lr LR (default 3e-4, the run's: results/lr_batch.md), until a minute before MINUTES are up.
# Environment: PHASES (default "checks sweep train"; a second call continues the run: PHASES=train, after the files it
# brought back are put into RUN); TRAIN_SET (more --set KEY=VALUE of the training, space-separated, after the CUDA
# defaults val.every=500 checkpoint_every=200, e.g.
# "val.every=1000 checkpoint_every=500"; like BATCH and LR they stay in the run's config, which a later resume keeps
# unless it sets its own); DEVICE (default cuda; cpu runs the same phases at tiny budgets, to check the script:
# the checks skipped, the sweep at batches 32 and 64 for one step, one training step); OUT (the device tool sets it;
# default runs/paper_sitting/out); WORK (default runs/paper_sitting/work). $OUT ends with at most 7 files (the device
# tool brings back 8): sitting.tar.gz (the checks, the sweep's table and this script's log, rewritten after each
# phase) and the run's files. The exit status says whether a phase failed; a failing phase does not stop the others.
set -uo pipefail
minutes=${1:-9.5}
start=$(date +%s)
phases=" ${PHASES:-checks sweep train} "
device=${DEVICE:-cuda}
run=${RUN:-train/checkpoints/paper}
batch=${BATCH:-2048}  # benchmarks/training_speed/results/lr_batch.md: 2,048 at 3e-4 no worse per example than 512
lr=${LR:-3e-4}
source "$(dirname "$0")/setup.sh" || exit 1  # the repository root, the robots, yourdfpy
out=${OUT:-runs/paper_sitting/out}
work=${WORK:-runs/paper_sitting/work}
mkdir -p "$out" "$work" || exit 1
exec > >(tee -a "$work/sitting.log") 2>&1
status=0

left_s() {  # seconds of MINUTES left, less $1
  awk -v m="$minutes" -v e="$(($(date +%s) - start))" -v r="${1:-0}" 'BEGIN { printf "%d", m * 60 - e - r }'
}
cap_s() {  # at most $1 seconds, and never past a minute before the end
  local left; left=$(left_s 60)
  if [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}
pack() {  # after every phase, so that a call cut short still brings back what ran
  tar czf "$out/.sitting.tar.gz" -C "$work" . && mv "$out/.sitting.tar.gz" "$out/sitting.tar.gz" || status=1
}
echo "paper_sitting: $minutes minutes, phases ${PHASES:-checks sweep train} on $device, run $run, batch $batch, lr $lr"

if [[ $phases == *" checks "* ]]; then
  if [ "$device" != cuda ]; then
    echo "checks: skipped on $device (they check CUDA)"
  elif [ "$(cap_s 180)" -gt 30 ]; then  # its own tarball stays out of $OUT (OUT unset): it goes into sitting.tar.gz
    OUT='' timeout "$(cap_s 180)" bash train/gpu/device_checks.sh "$work/device_checks" || status=1
  fi
  pack
fi

if [[ $phases == *" sweep "* ]]; then
  if [ "$device" = cuda ]; then
    sweep=(--device cuda --compile default --threads 0 --batches 512 1024 2048 4096 8192 16384 32768 --warmup 3
      --steps 5 --max-total-s 180)
  else
    sweep=(--device "$device" --compile eager --threads 1 --batches 32 64 --warmup 0 --steps 1)
  fi
  if [ "$(cap_s 240)" -gt 30 ]; then
    timeout "$(cap_s 240)" python3 -m benchmarks.training_speed.batch_sweep "${sweep[@]}" \
      --out "$work/batch_sweep_$device" || status=1
  fi
  pack
fi

if [[ $phases == *" train "* ]]; then
  for f in last.pt config.yaml metrics.jsonl val_problems.pt val_problems_paper.pt; do
    if [ -f "$run/$f" ]; then cp "$run/$f" "$out/" || status=1; fi
  done
  if [ "$device" = cuda ]; then
    budget=$(awk -v s="$(left_s 60)" 'BEGIN { printf "%.2f", s / 60 }')  # the trainer's clock starts after its set-up
    # validation (500 paper goals) and checkpoints every ~1 M / 0.4 M examples at batch 2,048, not every few seconds
    options=(--set compile=default --set threads=0 --set val.every=500 --set checkpoint_every=200)
  else
    budget=0.000001  # the first step passes it: one step
    options=(--set compile=eager --set threads=1)
  fi
  for kv in ${TRAIN_SET:-}; do options+=(--set "$kv"); done
  if [ ! -f "$out/last.pt" ]; then
    echo "train: $run/last.pt does not exist" && status=1
  elif awk -v b="$budget" 'BEGIN { exit !(b <= 0) }'; then
    echo "train: no time left"
  else
    python3 -m ggik.cli train --resume "$out" --device "$device" --no-progress --max-minutes "$budget" "${options[@]}" \
      --set data.batch_size="$batch" --set optim.lr="$lr" || status=1
  fi
  pack
fi

files=$(find "$out" -maxdepth 1 -type f | wc -l)
echo "paper_sitting: $(($(date +%s) - start)) s, $files files in $out (the device tool brings back 8), status $status"
if [ "$files" -gt 8 ]; then status=1; fi
exit $status
