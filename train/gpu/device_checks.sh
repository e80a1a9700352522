#!/usr/bin/env bash
# The CUDA checks in one short run (at most about 2 minutes on an H100 or H200; sized by benchmarks/sampler_price's
# README) on a GPU machine prepared as for training (train/gpu/README.md). Run from the repository root of a copy:
#   bash train/gpu/device_checks.sh [OUT_DIR] [--long]
# 1. the tests skipped without CUDA (sampling on the device, the stacked sampler, LM, the fixed-size Gauss-Newton
#    step, the whole solve on the device, where pytest is installed); 2. the whole solve on CUDA at B = 1, 100 and
#    10,000 goals, the model's rows included (benchmarks/solvers/device_solve.py; sampling passes sized by the GPU's
#    free memory, ggik.ik.sampling.default_graphs_per_pass). With --long, also (several minutes): sampling with
#    oversampling, training steps with compile default, and the cascades with sampling on CUDA (LM on the host).
#    Results go to OUT_DIR (default runs/device_checks); where $OUT is set (the device tool, which brings back at most
#    8 files) they also go there as one file, device_checks.tar.gz, rewritten after every check. A failing check
#    does not stop the others, and the exit status says whether any failed. The shipped model's training run comes
#    first (train_on_gpu.sh).
set -uo pipefail
source "$(dirname "$0")/setup.sh" || exit 1
out=runs/device_checks
long=0
for arg in "$@"; do
  case $arg in
    --long) long=1 ;;
    *) out=$arg ;;
  esac
done
mkdir -p "$out"
if [ -n "${OUT:-}" ] && [ "$(cd "$out" && pwd -P)" = "$(cd "$OUT" && pwd -P)" ]; then
  echo "device_checks.sh: OUT_DIR is \$OUT itself; name another folder (the results are packed into \$OUT)" >&2
  exit 2
fi
status=0
pack() {  # after every check, so that a call cut short by its time limit still brings back what ran
  if [ -n "${OUT:-}" ]; then tar czf "$OUT/device_checks.tar.gz" -C "$out" . || status=1; fi
}
if python3 -c "import pytest" 2>/dev/null; then
  python3 -m pytest -q -p no:cacheprovider -k cuda tests/test_oversample.py tests/test_stacked.py tests/test_lm_lean.py \
    tests/test_distance_geometry.py tests/test_cuda_solve.py >"$out/cuda_tests.txt" 2>&1 || status=1
  tail -20 "$out/cuda_tests.txt"
else
  echo "pytest is not installed here: the cuda tests did not run" | tee "$out/cuda_tests.txt"
fi
pack
python3 -m benchmarks.solvers.device_solve --device cuda --robots panda ur10 --goals 1 100 10000 \
  --repeats 2 --threads 8 --out "$out/device_solve_cuda" || status=1
pack
if [ "$long" = 1 ]; then
  python3 -m benchmarks.sampling.oversample --device cuda --robots panda ur10 lbr_iiwa kr16_2 -n 200 -s 32 \
    --oversample 1 4 --repeats 5 --out "$out/oversample_cuda" || status=1
  pack
  python3 -m benchmarks.training_speed.step_time --device cuda --batch 512 --steps 40 --warmup 10 --samplers stacked \
    --compile default --out "$out/step_time_cuda" || status=1
  pack
  python3 -m benchmarks.cascade.bench_cascade --device cuda --robots panda ur10 lbr_iiwa kr16_2 -n 200 \
    --samples 1 2 4 --random-starts 32 --repeats 3 --threads 8 --out "$out/cascade_cuda" || status=1
  pack
fi
exit $status
