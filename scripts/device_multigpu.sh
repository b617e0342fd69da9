#!/usr/bin/env bash
# Issue 17 on the lent machine, one call, any number of GPUs (N from `nvidia-smi -L`; on
# kind nvidia-h100-x2 the split runs over devices 0,1):
#   (t) the gpu-marked split tests (the batch split over every visible GPU == one GPU; with
#       2+ GPUs each GPU's shares run on kept buffers of its own and never wait for another
#       GPU's lock; full search split over 2 GPUs == one GPU; they skip with one GPU);
#   (a) full search of an 11- and a 12-line cart split over 1, 2, 4 ... N GPUs
#       (`bench --suite full_multi`): rate per GPU count, speedup, efficiency, same answer;
#   (b) the price-watch batch solver over 1, 2, 4 ... N GPUs at 250k and 1M synthetic carts
#       (`bench --suite batch_multi`): carts/s per GPU count, every answer == one GPU's, the
#       variant each share ran (the engine's pick for its size: no fallback), and concurrency
#       (the shares' times summed over their wall time: ~N when the GPUs ran at once);
#   (c) the Celery side: one `--pool=solo` gpu worker per GPU, pinned by CUDA_VISIBLE_DEVICES
#       (Redis carried as .debs, as scripts/device_django.sh does), price-watch-shaped batch
#       jobs fed through the `gpu` queue (`manage.py bench_batch_queue`): 1M carts in 20 jobs
#       sent at once, then a load of 400 jobs of 2,000 carts with 2 jobs in flight per worker;
#       jobs/s, carts/s, round-trip p50/p95 as workers are added (all start and warm up at
#       once, then are measured at N, then 1, 2, 4 ... below it, largest first, stopping
#       workers between), every pass's answers compared with the first pass's.
# With one GPU the split runs as two shares / two workers on the same card (0,0), so the
# plumbing and the one-card numbers come back while no multi-GPU kind is lent.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0; nothing here uses NCCL, but a library that
# loads it must not turn multicast on).
# Run through the device tool from the repository root with carry [".whl-dj"] (see
# scripts/device_wheels_dj.sh) and kind nvidia-h100-x2: the command starts with
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
#       --target /tmp/site .whl-dj/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1;
# and sets COMMIT=<the commit it copies> (the copy has no .git), e.g.
#   ... || exit 1; COMMIT=abc1234 bash scripts/device_multigpu.sh
# The whole call fits in one 10-minute command (TOTAL_S, each phase capped; a phase that has
# no time left is skipped and says so in log.txt).
# Locally (CPU, simulator, tiny sizes, Debian's redis-server) with DRY_RUN=1.
set -uo pipefail
OUT="${OUT:-/tmp/device_multigpu_out}"
TOTAL_S="${TOTAL_S:-530}"
RESERVE_S=15
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"
export NCCL_NVLS_ENABLE=0

if [ "${DRY_RUN:-0}" = 1 ]; then
    REDIS_PORT="${REDIS_PORT:-6391}"  # a private server: never the one others use here
    export NUMBA_ENABLE_CUDASIM=1
    NGPU=1
    BATCH_SIZES=20000 QUEUE_CARTS=20000 LOAD_JOBS=40 LOAD_CARTS=500
    REDIS_BIN="${REDIS_BIN:-$(command -v redis-server)}"
else
    REDIS_PORT="${REDIS_PORT:-6379}"
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    BATCH_SIZES=${BATCH_SIZES:-250000,1000000} QUEUE_CARTS=${QUEUE_CARTS:-1000000}
    LOAD_JOBS=${LOAD_JOBS:-400} LOAD_CARTS=${LOAD_CARTS:-2000}
    REDIS_BIN=/tmp/redis/usr/bin/redis-server
fi
[ "$NGPU" -ge 1 ] || { echo "no GPU listed by nvidia-smi -L" | tee -a "$LOG"; exit 1; }
facts() {  # what env_report adds: every GPU and their links, the code, numba's threading layer
    nvidia-smi -L
    nvidia-smi topo -m 2>/dev/null || true
    echo "commit: ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    echo "gpu_engine/batch digest: $(cat gpu_engine/batch/*.py | sha256sum | cut -c1-16)"
    "$PY" -c 'from gpu_engine.batch import staging; staging.warm(); print("numba threading layer:", staging.threading_layer())'
}
env_report facts
if [ "$NGPU" -eq 1 ]; then
    DEVICES=0,0 WORKERS=2  # two shares / two workers on the one card
else
    DEVICES=$(seq -s, 0 $((NGPU - 1))) WORKERS=$NGPU
fi
echo "GPUs: $NGPU; split devices: $DEVICES; gpu workers: $WORKERS" | tee -a "$LOG"

phase tests "${TEST_CAP:-120}" "$PY" -m pytest -m gpu -q -rs -p no:cacheprovider -p no:django \
    tests/gpu_engine/batch/test_multi.py tests/gpu_engine/solvers/full/test_full_multi.py
phase full_multi "${FULL_CAP:-90}" "$PY" -m gpu_engine bench --suite full_multi \
    --full-multi-devices "$DEVICES" --json "$OUT/full_multi.json"
phase batch_multi "${BATCH_CAP:-150}" "$PY" -m gpu_engine bench --suite batch_multi \
    --batch-devices "$DEVICES" --batch-multi-sizes "$BATCH_SIZES" --json "$OUT/batch_multi.json"

# (c) Redis, then every gpu worker at once (each warms up before its first message).
if [ "${DRY_RUN:-0}" != 1 ]; then
    mkdir -p /tmp/redis
    for deb in .whl-dj/deb/*.deb; do dpkg -x "$deb" /tmp/redis; done
    export LD_LIBRARY_PATH="/tmp/redis/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
REDIS_CLI="${REDIS_BIN%-server}-cli"
if "$REDIS_CLI" -p "$REDIS_PORT" ping >/dev/null 2>&1; then  # ours to start and to shut down
    echo "a Redis already answers on port $REDIS_PORT: pick another REDIS_PORT" | tee -a "$LOG"
    exit 1
fi
"$REDIS_BIN" --port "$REDIS_PORT" --save "" --appendonly no --daemonize yes \
    --logfile "$OUT/redis.log" || { echo "redis-server did not start" | tee -a "$LOG"; exit 1; }
export REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0 DATABASE_URL=sqlite:////tmp/multigpu.sqlite3
export SECRET_KEY=device-run ALLOWED_HOSTS=localhost,127.0.0.1 DEBUG=0 SMARTCART_GPU_QUEUE=1
PIDS=()
stop_all() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    wait
    "$REDIS_CLI" -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1
}
trap stop_all EXIT
for i in $(seq 0 $((WORKERS - 1))); do
    echo "gpu worker $i: CUDA_VISIBLE_DEVICES=$((i % NGPU)) --pool=solo" | tee -a "$LOG"
    CUDA_VISIBLE_DEVICES=$((i % NGPU)) "$PY" -m celery -A storefront worker -Q gpu --pool=solo \
        --concurrency=1 --prefetch-multiplier=1 --without-gossip --without-mingle \
        -I smartcart.batch_queue -n "gpu$i@%h" --loglevel=INFO >"$OUT/worker_$i.log" 2>&1 &
    PIDS+=($!)
done
t0=$SECONDS
while [ $((SECONDS - t0)) -lt "${WARM_CAP:-150}" ]; do
    [ "$(grep -l 'gpu warm-up took' "$OUT"/worker_*.log 2>/dev/null | wc -l)" -ge "$WORKERS" ] \
        && break
    sleep 1
done
grep -h "gpu warm-up took\|ready\." "$OUT"/worker_*.log | cut -c1-160 | tee -a "$LOG"
echo "workers warm after $((SECONDS - t0)) s" | tee -a "$LOG"

# Worker counts measured: all of them, then 1, 2, 4 ... below, largest first.
COUNTS=()
c=1
while [ "$c" -lt "$WORKERS" ]; do COUNTS=("$c" "${COUNTS[@]}"); c=$((c * 2)); done
COUNTS=("$WORKERS" "${COUNTS[@]}")
alive=$WORKERS
rm -f "$OUT"/digests_*.json
for k in "${COUNTS[@]}"; do
    while [ "$alive" -gt "$k" ]; do  # warm shutdown of the newest worker: the queue is empty
        kill -TERM "${PIDS[$((alive - 1))]}" 2>/dev/null
        wait "${PIDS[$((alive - 1))]}" 2>/dev/null
        alive=$((alive - 1))
    done
    phase "queue_1m_${k}w" "${QUEUE_CAP:-60}" "$PY" manage.py bench_batch_queue \
        --carts "$QUEUE_CARTS" --jobs 20 --label "$k workers, $QUEUE_CARTS carts" \
        --digests "$OUT/digests_1m.json" --json "$OUT/queue_1m_${k}w.json"
    phase "queue_load_${k}w" "${LOAD_CAP:-45}" "$PY" manage.py bench_batch_queue \
        --carts $((LOAD_JOBS * LOAD_CARTS)) --jobs "$LOAD_JOBS" --seed 1 \
        --in-flight $((2 * k)) --label "$k workers, load" \
        --digests "$OUT/digests_load.json" --json "$OUT/queue_load_${k}w.json"
done
grep -h "ERROR\|Traceback" "$OUT"/worker_*.log | sort | uniq -c | head -10 | tee -a "$LOG"

"$PY" - "$OUT" <<'PYEOF' 2>&1 | tee "$OUT/table.txt"
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])
for line in (out / "log.txt").read_text().splitlines():
    if line.startswith("=== ") and (" exit " in line or "skipped" in line):
        print(line)
def rows(name):
    path = out / name
    return json.loads(path.read_text()) if path.exists() else []
print("| full search | GPUs | devices | median ms | assignments/s | speedup | efficiency | same as 1 GPU | = DP |")
for r in rows("full_multi.json"):
    if "error" in r:
        print(f"| {r.get('case', '')} | error: {r['error']} |")
        continue
    print(f"| {r['case']} | {r['gpus']} | {r['devices']} | {r['median_ms']} | {r['rate_per_s']:.3e} | "
          f"{r['speedup_vs_1']} | {r['efficiency']} | {r['same_as_1gpu']} | {r['agrees_with_dp']} |")
print("| batch | GPUs | devices | GPU | share variants | engine ms (min) | carts/s | speedup | efficiency | same as 1 GPU | split ms | shares ms (wall) | share ms | concurrency | share carts | threading layer |")
for r in rows("batch_multi.json"):
    if "error" in r:
        print(f"| {r.get('case', '')} | error: {r['error']} |")
        continue
    same = r["same_totals_as_1gpu"] and r["same_choices_as_1gpu"]
    print(f"| {r['case']} | {r['gpus']} | {r['devices']} | {r['device']} | {r['gpu_variant']} | {r['engine_ms']} ({r['min_ms']}) | "
          f"{r['carts_per_s']} | {r['speedup_vs_1']} | {r['efficiency']} | {same} | "
          f"{r['split_ms']} | {r['shares_ms']} | {r['share_ms']} | {r['concurrency']} | {r['share_carts']} | "
          f"{r['threading_layer']} |")
print("| queue pass | jobs | in flight | wall s | jobs/s | carts/s | p50 ms | p95 ms | solve ms sum | load ms sum | same answers | jobs per worker |")
for path in sorted(out.glob("queue_*.json")):
    s = json.loads(path.read_text())
    print(f"| {s['label']} | {s['jobs']} | {s['in_flight']} | {s['wall_s']} | {s['jobs_per_s']} | "
          f"{s['carts_per_s']} | {s['round_trip_p50_ms']} | {s['round_trip_p95_ms']} | "
          f"{s['solve_ms_sum']} | {s['load_ms_sum']} | {s.get('same_answers_as_reference', 'first pass')} | "
          f"{s['jobs_per_worker']} |")
PYEOF
# The device tool brings back at most 8 files: the table, the log, the facts, and the rest in one
# archive.
tar czf /tmp/multigpu_details.tgz -C "$OUT" --exclude=table.txt --exclude=log.txt \
    --exclude=env.txt . && find "$OUT" -maxdepth 1 -type f ! -name table.txt ! -name log.txt \
    ! -name env.txt -delete && mv /tmp/multigpu_details.tgz "$OUT/details.tgz"
ls "$OUT"
