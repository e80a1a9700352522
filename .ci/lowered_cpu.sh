#!/usr/bin/env bash
# The default test set again with the CPU features lowered, as on an older or smaller CPU than CI's: results must not
# depend on the CPU the suite runs on.
#   NUMBA_CPU_NAME=generic    numba compiles ggik's LM kernel for a generic x86-64 CPU (no AVX2 / AVX-512 code)
#   ATEN_CPU_CAPABILITY=avx2  torch dispatches its AVX2 kernels, not AVX-512 ones; ggik.ik.sampling.native_bf16 then
#                             says no, so the sampler runs the network in float32 as on a CPU without native bf16
#   NUMBA_CACHE_DIR=fresh     the kernel is cache=True (numba's disk cache, by default ggik/ik/lm/__pycache__): a fresh
#                             folder, so that no kernel compiled for the full CPU is served to this pass
#   TORCHINDUCTOR_CACHE_DIR   the same for torch.compile's kernels (a kernel compiled under AVX-512 and served under
#                             AVX2 fails with "SystemError: tuple args required")
# Bounded by `timeout` (LOWERED_CPU_TIMEOUT, default 25m); 2 workers (CI's box has 2 cores). Arguments go to pytest,
# e.g. `.ci/lowered_cpu.sh tests/test_geometry.py` for a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export NUMBA_CPU_NAME=generic ATEN_CPU_CAPABILITY=avx2 NUMBA_CACHE_DIR="$cache/numba" TORCHINDUCTOR_CACHE_DIR="$cache/inductor"
# what was lowered, checked before the tests run
"$PY" - <<'PYTHON'
import numba
import torch

from ggik.ik.sampling import native_bf16

capability = torch.backends.cpu.get_cpu_capability()
assert capability.upper() in ("AVX2", "DEFAULT", "NO AVX"), f"torch still dispatches {capability} kernels"
assert not native_bf16("cpu"), "bf16 still counts as native"
assert numba.config.CPU_NAME == "generic", numba.config.CPU_NAME
print(f"lowered CPU: torch {capability} kernels, no native bf16, numba for a generic CPU, cache {numba.config.CACHE_DIR}")
PYTHON
timeout "${LOWERED_CPU_TIMEOUT:-25m}" "$PY" -m pytest -q -n 2 "$@"
