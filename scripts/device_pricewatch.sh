#!/usr/bin/env bash
# The price watch (issue 14) on the lent GPU, one call, through the real queue: Redis (Debian's
# redis-server, carried as .debs), SQLite in a file (every process shares it), one `gpu` queue
# worker (--pool=solo, on the GPU) and one `cpu` worker, SMARTCART_GPU_QUEUE=1. Phases:
#   warm: a small bench whose job runs on the gpu worker (its first batch compiles the kernels);
#   gpu_N: `bench_price_watch --carts N --route gpu` for each N of CARTS: the feed's commit sends
#       the job to the gpu queue, the gpu worker runs it (solver device: the GPU), the command
#       waits for the run's row and reports counts, times, route and device;
#   cpu_N: the same once with `--route cpu` (the job on the cpu worker, the CPU twin): the peer.
# Logs, worker logs and env.txt under $OUT. Run through the device tool from the repository
# root with carry [".whl-dj"] (wheels of numpy, numba, highspy and the Django stack, plus
# .whl-dj/deb/*.deb with redis-server); the command starts with
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
#       --target /tmp/site .whl-dj/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1;
# then `bash scripts/device_pricewatch.sh`. Sizes: CARTS (default "20000 100000"), CPU_CARTS
# (20000); products are a fifth of the carts.
#
# Locally: DRY_RUN=1 PY=/work/main/.venv/bin/python bash scripts/device_pricewatch.sh runs the
# plumbing on the CPU (the CUDA simulator turns the gpu worker's batches to the CPU twin), small
# sizes, with the local redis-server binary when no .debs are carried, on a private port
# (REDIS_PORT, default 6391 in a dry run: never the shared 6379).
set -uo pipefail
OUT="${OUT:-/tmp/device_pricewatch_out}"
TOTAL_S="${TOTAL_S:-540}"
RESERVE_S=15
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"
if [ "${DRY_RUN:-0}" = 1 ]; then
    export NUMBA_ENABLE_CUDASIM=1
    REDIS_PORT="${REDIS_PORT:-6391}"
    CARTS="${CARTS:-1000 3000}"
    CPU_CARTS="${CPU_CARTS:-1000}"
    WARM_CARTS=300
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    REDIS_PORT="${REDIS_PORT:-6379}"
    CARTS="${CARTS:-20000 100000}"
    CPU_CARTS="${CPU_CARTS:-20000}"
    WARM_CARTS=2000
fi
env_report

REDIS_DIR=/tmp/pricewatch-redis
REDIS_SERVER=$(command -v redis-server || true)
if compgen -G ".whl-dj/deb/*.deb" >/dev/null; then
    mkdir -p "$REDIS_DIR"
    for deb in .whl-dj/deb/*.deb; do dpkg -x "$deb" "$REDIS_DIR"; done
    export LD_LIBRARY_PATH="$REDIS_DIR/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
    REDIS_SERVER="$REDIS_DIR/usr/bin/redis-server"
fi
[ -n "$REDIS_SERVER" ] || { echo "no redis-server (carry .whl-dj/deb/*.deb)" | tee -a "$LOG"; exit 1; }
echo "redis: $REDIS_SERVER on port $REDIS_PORT" | tee -a "$LOG"
"$REDIS_SERVER" --port "$REDIS_PORT" --save "" --appendonly no --daemonize yes \
    --pidfile "$OUT/redis.pid" --logfile "$OUT/redis.log" \
    || { echo "redis-server did not start" | tee -a "$LOG"; exit 1; }

DB=/tmp/smartcart-pricewatch.sqlite3
rm -f "$DB"
export DATABASE_URL=sqlite:///$DB REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
export SECRET_KEY=device-run ALLOWED_HOSTS=localhost,127.0.0.1,testserver DEBUG=0
export SMARTCART_GPU_QUEUE=1 SMARTCART_PRICE_WATCH=1
phase migrate 90 "$PY" manage.py migrate --noinput -v0

CELERY=("$PY" -m celery -A storefront worker --prefetch-multiplier=1 --without-gossip
    --without-mingle --loglevel=INFO)
"${CELERY[@]}" -Q gpu --pool=solo --concurrency=1 -n gpu0@%h >"$OUT/worker_gpu.log" 2>&1 &
GPU_WORKER=$!
"${CELERY[@]}" -Q cpu --pool=prefork --concurrency=2 -n cpu@%h >"$OUT/worker_cpu.log" 2>&1 &
CPU_WORKER=$!
# Only what this script started: its workers and its own redis-server (by its pid file).
trap 'kill $GPU_WORKER $CPU_WORKER 2>/dev/null; wait; \
    [ -s "$OUT/redis.pid" ] && kill "$(cat "$OUT/redis.pid")" 2>/dev/null' EXIT
for _ in $(seq 120); do
    grep -q "ready." "$OUT/worker_gpu.log" && grep -q "ready." "$OUT/worker_cpu.log" && break
    sleep 0.5
done
grep -h "ready\." "$OUT"/worker_*.log | tee -a "$LOG"

bench() {  # bench ROUTE CARTS CAP
    local route=$1 carts=$2 cap=$3
    phase "${route}_$carts" "$cap" "$PY" manage.py bench_price_watch --route "$route" \
        --carts "$carts" --products $((carts / 5 > 200 ? carts / 5 : 200)) --merchants 60 \
        --countdown 1 --wait $((cap - 10))
}
bench gpu "$WARM_CARTS" 120
for carts in $CARTS; do
    bench gpu "$carts" "${GPU_CAP:-240}"
done
bench cpu "$CPU_CARTS" "${CPU_CAP:-150}"

echo "=== where the jobs ran (worker logs)" | tee -a "$LOG"
for worker in gpu cpu; do
    echo "worker $worker: $(grep -c "price_watch_run.*succeeded" "$OUT/worker_$worker.log") runs" \
        | tee -a "$LOG"
    grep -h "price_watch_run.*succeeded\|Traceback\|ERROR" "$OUT/worker_$worker.log" \
        | tail -8 | tee -a "$LOG"
done
