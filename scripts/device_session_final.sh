#!/usr/bin/env bash
# One call on a lent 2-GPU machine (kind nvidia-h100-x2): (a) the batch warm-up's steps timed
# in two fresh processes sharing one Numba cache (scripts/probe_batch_cache.py); (b) every
# gpu-marked test of tests/gpu_engine (the multi-GPU ones run: 2 GPUs); (c) the realistic mix
# (1M carts) over 1 and 2 GPUs (`bench --suite batch_multi --batch-multi-carts mix`); (d) a gpu
# worker's first and restarted start (scripts/device_worker_start.sh). Carry [".whl-dj"] and
# run from the repository root after the wheel install (see device_django.sh).
set -uo pipefail
OUT="${OUT:-/tmp/device_final_out}"
TOTAL_S="${TOTAL_S:-540}"
RESERVE_S=10
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"
export SMARTCART_REAL_GPU=1 PYTHONFAULTHANDLER=1 NCCL_NVLS_ENABLE=0
unset NUMBA_ENABLE_CUDASIM
env_report nvidia-smi -L
# `phase` runs a command under `timeout`, which cannot run a shell function.
rm -rf /tmp/nc-probe
phase probe_cold 60 env NUMBA_CACHE_DIR=/tmp/nc-probe "$PY" scripts/probe_batch_cache.py
phase probe_warm 40 env NUMBA_CACHE_DIR=/tmp/nc-probe "$PY" scripts/probe_batch_cache.py
phase tests "${TEST_CAP:-190}" "$PY" -m pytest -m gpu -q -rs -p no:cacheprovider -p no:django \
    tests/gpu_engine
phase batch_multi "${MULTI_CAP:-110}" "$PY" -m gpu_engine bench --suite batch_multi \
    --batch-multi-carts mix --batch-multi-sizes 1000000 --batch-multi-repeats 2 \
    --json "$OUT/batch_multi.json"
OUT="$OUT/ws" TOTAL_S=$((TOTAL_S - SECONDS)) bash scripts/device_worker_start.sh >/dev/null 2>&1
grep -h "===" "$OUT/ws/log.txt" | tee -a "$LOG"
