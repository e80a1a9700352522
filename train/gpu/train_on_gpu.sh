#!/usr/bin/env bash
# Time-boxed, resumable training on an offline GPU machine whose Python has torch (CUDA), numpy, scipy, pyyaml, lxml
# and tqdm but not yourdfpy or trimesh (train/gpu/README.md). Run from the repository root of a copy of the project:
#   bash train/gpu/train_on_gpu.sh RUN_DIR MINUTES [ggik train options]
# A RUN_DIR without last.pt starts a new run (options: --config, --init, --set ...); one with last.pt resumes it exactly
# (options: --set only). The run checkpoints every checkpoint_every steps and at the end; where $OUT is set (the
# device tool), last.pt, metrics.jsonl and config.yaml are copied there to be brought back.
set -euo pipefail
run=${1:?RUN_DIR}; minutes=${2:?MINUTES}; shift 2
source "$(dirname "$0")/setup.sh" || exit 1
if [ -f "$run/last.pt" ]; then
  start=(--resume "$run")
else
  start=(--out "$run")
fi
status=0
python3 -m ggik.cli train "${start[@]}" --device cuda --no-progress --max-minutes "$minutes" "$@" || status=$?
if [ -n "${OUT:-}" ]; then
  for f in last.pt metrics.jsonl config.yaml; do [ -f "$run/$f" ] && cp "$run/$f" "$OUT/"; done
fi
exit $status
