# Sourced by the GPU scripts of train/gpu/ (bash, from the repository root of a copy of the project; returns 1 when
# it cannot prepare the machine): makes this checkout runnable as `python3 -m ...` on a machine whose Python has torch
# (CUDA), numpy, scipy, pyyaml, lxml and tqdm but no network (yourdfpy and trimesh from .whl/ where carried:
# train/gpu/README.md).
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || return 1  # the repository root, wherever the caller stood
site=${GGIK_SITE:-/tmp/ggik-site}
# the robots, where the wheel puts them (python -m runs this checkout); GGIK_URDF_LINK=0: no link (an editable install of
# this checkout maps them already, as the project's .venv does: tests run the scripts so, leaving the checkout as it is)
[ "${GGIK_URDF_LINK:-1}" = 0 ] || [ -e ggik/urdfs ] || ln -s ../urdfs ggik/urdfs
# yourdfpy and trimesh: ggik trains, samples and solves without them (its own URDF reader since 48b2504; trimesh only
# for mesh collision shapes), and the tests device_checks.sh runs import neither; installed from .whl/ where carried
if ! python3 -c "import yourdfpy" 2>/dev/null; then
  if ls .whl/yourdfpy-*.whl .whl/trimesh-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
      .whl/yourdfpy-*.whl .whl/trimesh-*.whl || return 1
  else
    echo "setup.sh: yourdfpy is not installed and .whl/ holds no wheels of it: ggik runs without it" >&2
  fi
fi
export PYTHONPATH="$site:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
