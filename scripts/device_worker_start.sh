#!/usr/bin/env bash
# A gpu queue worker's first and restarted start on the device host (issue 30), one call:
# Redis (Debian's, carried as .debs), SQLite in a file, the demo catalog, a cpu worker, then
# the gpu worker (--pool=solo) started twice with one Numba cache folder (NUMBA_CACHE_DIR, empty
# before the first start). Each start is timed from the worker's launch to its "ready" line and
# to the end of its gpu warm-up (it takes no message before), and to the answer of an
# improve-cart job sent the moment the worker is launched (`bench_optimize --runs 1`), so the
# job waits in the broker as it would for a restarted worker.
# Run through the device tool with carry [".whl-dj"] (scripts/device_wheels_dj.sh); the
# command starts with the wheel install and PYTHONPATH export (see device_django.sh).
set -uo pipefail
OUT="${OUT:-/tmp/device_worker_start_out}"
TOTAL_S="${TOTAL_S:-420}"
RESERVE_S=10
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"
REDIS_PORT="${REDIS_PORT:-6379}"
export SMARTCART_REAL_GPU=1
unset NUMBA_ENABLE_CUDASIM
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/smartcart-numba-cache}"
rm -rf "$NUMBA_CACHE_DIR" && mkdir -p "$NUMBA_CACHE_DIR"
env_report

carried_redis_start "$REDIS_PORT"
rm -f /tmp/smartcart-device.sqlite3
export DATABASE_URL=sqlite:////tmp/smartcart-device.sqlite3 REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
export SECRET_KEY=device-run ALLOWED_HOSTS=localhost,127.0.0.1,testserver DEBUG=0
export SMARTCART_GPU_QUEUE=1
# shellcheck disable=SC2016
phase setup 120 bash -c '"$0" manage.py migrate --noinput -v0 && "$0" manage.py seed_demo \
    --if-empty' "$PY"

CELERY=("$PY" -m celery -A storefront worker --prefetch-multiplier=1 --without-gossip
    --without-mingle --loglevel=INFO)
"${CELERY[@]}" -Q cpu --pool=prefork --concurrency=2 -n cpu@%h >"$OUT/worker_cpu.log" 2>&1 &
CPU_WORKER=$!
GPU_WORKER=
trap 'kill $CPU_WORKER $GPU_WORKER 2>/dev/null; wait; \
    /tmp/redis/usr/bin/redis-cli -p $REDIS_PORT shutdown nosave >/dev/null 2>&1' EXIT
for _ in $(seq 240); do grep -q "ready\." "$OUT/worker_cpu.log" && break; sleep 0.5; done

since() { "$PY" -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.2f}')" "$1"; }

start_gpu_worker() {  # start_gpu_worker NAME: one timed start and first job
    local name=$1 log="$OUT/worker_gpu_$1.log" t0 ready="" warm=""
    t0=$("$PY" -c 'import time; print(time.time())')
    "${CELERY[@]}" -Q gpu --pool=solo --concurrency=1 -n "gpu0-$name@%h" >"$log" 2>&1 &
    GPU_WORKER=$!
    # The job goes in at once: it waits in the broker until the worker takes messages.
    timeout 180 "$PY" manage.py bench_optimize --series auto --lines "${JOB_LINES:-40}" \
        --runs 1 --warmup 0 --json "$OUT/first_job_$name.json" >"$OUT/first_job_$name.txt" 2>&1
    local job_s
    job_s=$(since "$t0")
    for _ in $(seq 240); do
        [ -z "$ready" ] && grep -q "ready\." "$log" && ready=$(since "$t0")
        grep -q "gpu warm-up" "$log" && { warm=$(since "$t0"); break; }
        sleep 0.25
    done
    echo "=== start $name: first job answered ${job_s} s after launch (ready line seen by ${ready:-?} s, warm-up line by ${warm:-?} s)" | tee -a "$LOG"
    grep -h "warm" "$log" | head -5 | tee -a "$LOG"
    tail -3 "$OUT/first_job_$name.txt" | tee -a "$LOG"
    kill "$GPU_WORKER" 2>/dev/null
    wait "$GPU_WORKER" 2>/dev/null
    GPU_WORKER=
}

start_gpu_worker first
echo "numba cache: $(du -sh "$NUMBA_CACHE_DIR" | cut -f1), $(find "$NUMBA_CACHE_DIR" -name '*.nbi' | wc -l) index files" | tee -a "$LOG"
start_gpu_worker second

"$PY" - "$OUT" <<'PYEOF' 2>&1 | tee -a "$LOG"
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("first_job_*.json")):
    for series in json.loads(path.read_text())["series"]:
        print(path.stem, series["name"], "routes", series["routes"], "failures",
              len(series["failures"]))
PYEOF
