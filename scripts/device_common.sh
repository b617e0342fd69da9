# Shared by the device batch scripts (sourced, not run): the output folder and log, the
# environment facts every BENCHMARKS.md entry quotes, and `phase`, which runs one part of a
# batch within what is left of the call's time so one slow part cannot cost the rest.
# The sourcing script sets OUT's default, TOTAL_S and RESERVE_S first.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export GPU_ENGINE_PROFILE="${GPU_ENGINE_PROFILE:-$PWD/gpu_engine/planning/default_profile.json}"
PY="${PY:-python3}"
LOG="$OUT/log.txt"
: >"$LOG"

env_report() {  # env_report [EXTRA_CMD...]: device, versions and host into $OUT/env.txt
    {
        date -u +%Y-%m-%dT%H:%M:%SZ
        git log -1 --format='commit %h %s' 2>/dev/null || true
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
            --format=csv 2>/dev/null || echo "no nvidia-smi"
        "$PY" -c 'import sys, numpy, numba, numba_cuda, highspy; print(sys.version.split()[0], "numpy", numpy.__version__, "numba", numba.__version__, "numba-cuda", numba_cuda.__version__)'
        [ "$#" -gt 0 ] && "$@"
        echo "cpus: $(nproc) $(lscpu | sed -n 's/^Model name: *//p')"
        echo "profile: $GPU_ENGINE_PROFILE"
    } 2>&1 | tee "$OUT/env.txt"
}

phase() {  # phase NAME CAP_S CMD...: run within min(CAP_S, time left), log exit code and seconds
    local name=$1 cap=$2 t0=$SECONDS left
    shift 2
    left=$((TOTAL_S - RESERVE_S - SECONDS))
    [ "$left" -lt "$cap" ] && cap=$left
    if [ "$cap" -lt 15 ]; then
        echo "=== $name skipped: ${left} s left" | tee -a "$LOG"
        return
    fi
    echo "=== $name (limit $cap s)" | tee -a "$LOG"
    timeout "$cap" "$@" 2>&1 | tee -a "$LOG"
    echo "=== $name exit ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$LOG"
}

carried_redis_start() {  # carried_redis_start PORT: Debian's redis-server from .whl-dj/deb
    mkdir -p /tmp/redis
    for deb in .whl-dj/deb/*.deb; do dpkg -x "$deb" /tmp/redis; done
    export LD_LIBRARY_PATH="/tmp/redis/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
    /tmp/redis/usr/bin/redis-server --port "$1" --save "" --appendonly no --daemonize yes \
        --logfile "$OUT/redis.log" || { echo "redis-server did not start" | tee -a "$LOG"; exit 1; }
}
