"""Kernel variants that numba can keep in its on-disk cache.

A kernel built in a closure (its shared-array sizes, accumulator type, mode flags and the device
functions it calls captured from the factory) is compiled again by every process: numba keys a
closure's cache entry on a pickle of its cells, and cells holding device functions do not pickle
the same way twice. Measured on an H100 host, that was 25 s of a restarted gpu worker's 33 s.

Here a variant is the kernel's module-level *template* (plain Python whose free names are
module globals) copied with some of those globals replaced, a new function with no closure, and
named after everything that makes it differ: the values it was given and a hash of the source
files its code comes from. numba's cache keeps one index per (source file, qualified name), so
each variant has entries of its own, and a changed source makes a new name rather than loading
stale code (numba itself only watches the template's file).
"""

from __future__ import annotations

import hashlib
import inspect
import re
import types
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any


@cache
def source_tag(*module_names: str) -> str:
    """A short hash of the named modules' source files (what a variant's code is made of)."""
    import importlib

    digest = hashlib.sha256()
    for name in module_names:
        path = inspect.getfile(importlib.import_module(name))
        with open(path, "rb") as source:
            digest.update(source.read())
    return digest.hexdigest()[:12]


def variant_name(base: str, parts: Iterable[Any]) -> str:
    """``base`` and each part joined into one identifier (safe in a file name)."""
    text = "_".join([base, *(str(part) for part in parts)])
    return re.sub(r"[^0-9A-Za-z_]", "_", text)


def with_globals(template: Callable, name: str, replaced: dict[str, Any]) -> types.FunctionType:
    """A copy of ``template`` (a module-level function without closure) named ``name`` whose
    globals are the template module's with ``replaced`` on top."""
    code = template.__code__
    if template.__closure__:
        raise ValueError(f"{template.__name__} is a closure; a template must not be")
    scope = {**template.__globals__, **replaced}
    fn = types.FunctionType(code.replace(co_name=name, co_qualname=name), scope, name)
    fn.__qualname__ = name
    fn.__module__ = template.__module__
    return fn


def cached_kernel(
    template: Callable,
    *,
    name: str,
    replaced: dict[str, Any],
    jit: Callable[..., Any],
    **options: Any,
) -> Any:
    """``jit(cache=True, **options)`` of :func:`with_globals` (``jit``: ``numba.cuda.jit``, or
    the simulator's, passed in so this module never imports CUDA)."""
    return jit(cache=True, **options)(with_globals(template, name, replaced))
