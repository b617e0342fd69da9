#!/usr/bin/env bash
# gpu_engine device batch (issue 3): environment facts, the gpu-marked engine tests, then the
# engine benchmarks (full_search with kernel variants, seed_cart, subset_dp), each with HiGHS
# and CP-SAT in the same run. Logs and bench.json land in $OUT; a table is printed last.
# Run through the device tool with carry [".whl"] from the repository root.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/device_engine_out}"
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 SMARTCART_REAL_GPU=1
unset NUMBA_ENABLE_CUDASIM

{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    python3 -c 'import sys, numpy, numba, numba_cuda, highspy; print(sys.version.split()[0], "numpy", numpy.__version__, "numba", numba.__version__, "numba-cuda", numba_cuda.__version__)'
    echo "cpus: $(nproc) $(lscpu | sed -n 's/^Model name: *//p')"
} 2>&1 | tee "$OUT/env.txt"

timeout "${TEST_TIMEOUT:-200}" python3 -m pytest -m gpu -q -p no:cacheprovider -p no:django \
    tests/gpu_engine/solvers/full/test_gpu_full.py tests/gpu_engine/solvers/dp/test_gpu_dp.py 2>&1 | tee "$OUT/gpu_tests.txt"

timeout "${BENCH_TIMEOUT:-300}" python3 -m gpu_engine bench \
    --suite full_search --full-search-variants --suite seed_cart --suite subset_dp \
    --json "$OUT/bench.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.txt"
