"""The GA's random numbers: xoroshiro128+ streams, one per population slot, bit-identical to
``numba.cuda.random`` so that the CPU twin and the CUDA kernels draw the same numbers.

Every slot draws exactly ``N_DRAWS`` (:mod:`gpu_engine.solvers.ga.core`) numbers per
generation, so a run is a pure function of the seed and the number of generations, on either
device. The scalar helpers take scalars only: inside the CUDA simulator kernel arguments are
Python wrappers that an njit function cannot accept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numba
import numpy as np

# Probabilities are compared as integers against the top 24 bits of a draw: no float rounding
# can differ between CPU and GPU.
PROB_BITS = 24
PROB_ONE = 1 << PROB_BITS


@numba.njit(cache=True)
def rng_next(states, index):
    """xoroshiro128+ step on a uint64[n, 2] state array, bit-identical to
    ``numba.cuda.random.xoroshiro128p_next`` (which the kernels call). The CPU twin needs its
    own: numba's is compiled in object mode whenever the CUDA simulator is on."""
    s0 = states[index, 0]
    s1 = states[index, 1]
    result = s0 + s1
    s1 ^= s0
    states[index, 0] = ((s0 << np.uint64(55)) | (s0 >> np.uint64(9))) ^ s1 ^ (s1 << np.uint64(14))
    states[index, 1] = (s1 << np.uint64(36)) | (s1 >> np.uint64(28))
    return result


_JUMP = (np.uint64(0xBEAC0467EBA5FACB), np.uint64(0xD86B048B86AA9922))


@numba.njit(cache=True)
def init_states(states, seed):
    """Seed uint64[n, 2] xoroshiro128+ states exactly as ``numba.cuda.random``'s
    ``init_xoroshiro128p_states`` does (splitmix64 of the seed, then each state the previous one
    jumped 2**64 steps), so that streams never overlap. Compiled and cached here: numba's own
    host initialiser is compiled afresh in every process (seconds), which a worker must not pay
    on its first shopper."""
    z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    if states.shape[0] == 0:
        return
    states[0, 0] = z
    states[0, 1] = z
    for k in range(1, states.shape[0]):
        states[k, 0] = states[k - 1, 0]
        states[k, 1] = states[k - 1, 1]
        s0 = np.uint64(0)
        s1 = np.uint64(0)
        for word in range(2):
            for bit in range(64):
                if (_JUMP[word] >> np.uint64(bit)) & np.uint64(1):
                    s0 ^= states[k, 0]
                    s1 ^= states[k, 1]
                rng_next(states, k)
        states[k, 0] = s0
        states[k, 1] = s1


@numba.njit(cache=True)
def rand_below(draw, k):
    """A number in [0, k) from a uint64 draw (31 high bits; bias < k / 2**31)."""
    return np.int64(draw >> np.uint64(33)) % np.int64(k)


@numba.njit(cache=True)
def rand_chance(draw, p_int):
    """True with probability ``p_int / PROB_ONE``."""
    return np.int64(draw >> np.uint64(64 - PROB_BITS)) < p_int


_states_lock = threading.Lock()
_states_cache: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
_STATES_CACHE_SIZE = 8


def rng_states(population: int, seed: int) -> np.ndarray:
    """uint64[population, 2] xoroshiro128+ states in ``numba.cuda.random``'s layout and seeding
    (:func:`init_states`), computed once per (size, seed) and copied."""
    key = (population, seed)
    with _states_lock:
        if key in _states_cache:
            _states_cache.move_to_end(key)
            return _states_cache[key].copy()
    states = np.empty((population, 2), dtype=np.uint64)
    init_states(states, np.uint64(seed))
    with _states_lock:
        _states_cache[key] = states
        while len(_states_cache) > _STATES_CACHE_SIZE:
            _states_cache.popitem(last=False)
    return states.copy()
