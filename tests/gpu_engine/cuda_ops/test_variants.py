"""Kernel variants kept in numba's on-disk cache: each variant its own entry, never another's
code; a template that is a closure is refused. Checked with numba.njit (same cache machinery,
no GPU needed) in fresh processes sharing one cache folder."""

import os
import subprocess
import sys
import textwrap

import pytest

from gpu_engine.cuda_ops.variants import source_tag, variant_name, with_globals

SCALE = 1


def _template(x):
    return x * SCALE


def test_a_variant_reads_its_replaced_globals_under_its_own_name():
    triple = with_globals(_template, "times_3", {"SCALE": 3})
    assert triple(5) == 15 and _template(5) == 5
    assert triple.__name__ == triple.__qualname__ == "times_3"
    assert triple.__module__ == _template.__module__


def test_a_closure_is_refused():
    factor = 2

    def closure(x):
        return x * factor

    with pytest.raises(ValueError, match="closure"):
        with_globals(closure, "nope", {})


def test_names_are_identifiers_and_tags_follow_the_sources():
    assert variant_name("k", ["m64", "cuda.jit(py_func)", 3]) == "k_m64_cuda_jit_py_func__3"
    tag = source_tag("gpu_engine.cuda_ops.variants")
    assert len(tag) == 12 and tag == source_tag("gpu_engine.cuda_ops.variants")
    assert tag != source_tag("gpu_engine.cuda_ops.reduce")


_PROGRAM = textwrap.dedent(
    """
    import sys
    import numba
    from gpu_engine.cuda_ops.variants import cached_kernel, variant_name
    from tests.gpu_engine.cuda_ops.test_variants import _template

    for scale in (2, 7):
        fn = cached_kernel(
            _template, name=variant_name("scaled", [scale]), replaced={"SCALE": scale},
            jit=numba.njit,
        )
        print(scale, fn(10), len(fn.stats.cache_hits))
    """
)


def test_each_variant_has_its_own_cache_entry_across_processes(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    runs = [
        subprocess.run(
            [sys.executable, "-c", _PROGRAM], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    first, second = ([row[i : i + 3] for i in range(0, 6, 3)] for row in runs)
    assert first == [["2", "20", "0"], ["7", "70", "0"]], "compiled in the first process"
    assert second == [["2", "20", "1"], ["7", "70", "1"]], "loaded, each its own code"
