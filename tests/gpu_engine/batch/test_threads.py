"""``GPU_ENGINE_HOST_THREADS``: a gpu worker's numba host threads (its share of the host's cores
when several workers share one host)."""

import threading

import numba
import pytest

from gpu_engine.batch.threads import (
    ENV,
    host_threads_apply,
    host_threads_from_env,
    threads_limited,
)

POOL = int(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.parametrize(
    ("raw", "want"), [(None, None), ("", None), ("0", None), (" 3 ", 3), ("16", 16)]
)
def test_the_knob_reads_a_count_or_numbas_default(raw, want):
    environ = {} if raw is None else {ENV: raw}
    assert host_threads_from_env(environ) == want


@pytest.mark.parametrize("raw", ["half", "-2", "1.5"])
def test_a_bad_count_is_an_error(raw):
    with pytest.raises(ValueError, match=ENV):
        host_threads_from_env({ENV: raw})


def _in_thread(target):
    """``target()`` in a fresh thread (numba's count is per thread: the test's stays as is)."""
    out = []
    thread = threading.Thread(target=lambda: out.append(target()))
    thread.start()
    thread.join()
    return out[0]


def test_apply_sets_the_calling_threads_count_capped_at_the_pool():
    def apply(raw):
        return host_threads_apply({ENV: raw}), numba.get_num_threads()

    assert _in_thread(lambda: apply("1")) == (1, 1)
    assert _in_thread(lambda: apply(str(POOL + 5))) == (POOL, POOL)
    assert _in_thread(lambda: (host_threads_apply({}), numba.get_num_threads())) == (None, POOL)


def test_threads_limited_restores_the_count():
    def limited():
        with threads_limited(0) as inside:
            during = numba.get_num_threads()
        return inside, during, numba.get_num_threads()

    assert _in_thread(limited) == (1, 1, POOL)
