#!/usr/bin/env bash
# Issue 7 on the lent GPU: real-hardware tests of the catalog kernels, then their benchmark with
# its peers (torch, CuPy) in the same run. Results land in $OUT (or ./device_out when unset).
# Run from the repository root with `.whl` carried: the image's NumPy 2.5 breaks numba-cuda.
set -uo pipefail
OUT="${OUT:-device_out}"
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/numpy-*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem \
    --format=csv | tee "$OUT/gpu.txt"
python3 -c "import numpy, numba, numba_cuda, cupy, torch; print('numpy', numpy.__version__, \
'numba', numba.__version__, 'numba-cuda', getattr(numba_cuda, '__version__', '?'), \
'cupy', cupy.__version__, 'torch', torch.__version__)" | tee -a "$OUT/gpu.txt"

SMARTCART_REAL_GPU=1 timeout "${CATALOG_TEST_TIMEOUT:-240}" python3 -m pytest -m gpu -q \
    -p no:cacheprovider tests/gpu_engine/catalog/cheapest_offer/test_cheapest_offer.py \
    tests/gpu_engine/catalog/radix/test_radix_tree.py \
    2>&1 | tee "$OUT/pytest_gpu.log"
echo "pytest exit: ${PIPESTATUS[0]}" | tee -a "$OUT/pytest_gpu.log"

timeout "${CATALOG_BENCH_TIMEOUT:-270}" python3 -m gpu_engine.bench.catalog \
    --json "$OUT/catalog.json" "$@" 2>&1 | tee "$OUT/bench.log"
echo "bench exit: ${PIPESTATUS[0]}"
