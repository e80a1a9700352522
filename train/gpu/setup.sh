# Sourced by the GPU scripts of train/gpu/ (bash, from the repository root of a copy of the project; returns 1 when
# it cannot prepare the machine): makes this checkout runnable as `python3 -m ...` on a machine whose Python has torch (CUDA), numpy, scipy, pyyaml, lxml and tqdm
# but neither network nor yourdfpy/trimesh (their wheels carried in .whl/, train/gpu/README.md).
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || return 1  # the repository root, wherever the caller stood
site=${GGIK_SITE:-/tmp/ggik-site}
[ -e ggik/urdfs ] || ln -s ../urdfs ggik/urdfs  # the robots, where the wheel puts them (python -m runs this checkout)
if ! python3 -c "import yourdfpy" 2>/dev/null; then
  if ! ls .whl/yourdfpy-*.whl .whl/trimesh-*.whl >/dev/null 2>&1; then
    echo "setup.sh: yourdfpy is not installed here and .whl/ holds no yourdfpy and trimesh wheels" \
      "(train/gpu/README.md: carry the project there)" >&2
    return 1
  fi
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" \
    .whl/yourdfpy-*.whl .whl/trimesh-*.whl
fi
export PYTHONPATH="$site:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
