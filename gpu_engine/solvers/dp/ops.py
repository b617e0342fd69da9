"""The exact subset DP's per-state step, written once for both devices.

Plain Python compiled twice: ``numba.njit`` in :mod:`gpu_engine.solvers.dp.cpu` (``merchant_dp``
walks the line sets one after another) and ``cuda.jit(device=True)`` in
:mod:`gpu_engine.solvers.dp.cuda` (the layer kernel, one thread per line set).

For merchant ``m``, whose free lines are bits ``lines[m, :n_lines[m]]`` of a line set, and a
line set ``s``: ``x = s & A_m`` is what ``m`` could ship of ``s`` and ``xc = compress(x, ...)``
its compressed twin (bit ``b`` = ``m``'s ``b``-th line), the index into ``m``'s cost table.
``best_split`` enumerates every submask ``t`` of ``x`` with its compressed twin ``tc`` in
lockstep (compression keeps the submask order) and returns the cheapest
``h[s ^ t] + cost[tc]`` with that ``tc`` (``INF`` and 0 when no ``h[s ^ t]`` is reachable).

``h`` is the previous merchant's layer. The CPU passes its single table, rewritten in place
in decreasing ``s`` (``s ^ t <= s``, and ``t = 0`` reads ``h[s]`` before it is written, so
every read sees the previous layer); the GPU passes ``h_prev`` and writes another buffer.
"""

INF = 2**62


def compress(x, m, n_lines, lines):
    c = 0
    for b in range(n_lines[m]):
        if (x >> lines[m, b]) & 1:
            c |= 1 << b
    return c


def best_split(s, x, xc, h, cost):
    best = INF
    best_t = 0
    tc = xc
    t = x
    while True:
        prev = h[s ^ t]
        if prev < INF:
            v = prev + cost[tc]
            if v < best:
                best = v
                best_t = tc
        if tc == 0:
            break
        tc = (tc - 1) & xc
        t = (t - 1) & x
    return best, best_t
