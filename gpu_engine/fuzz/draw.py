"""Which cart a fuzz run draws: the shapes of either contract version by name, and the cart of
a ``(seed, index)``. Apart from :mod:`gpu_engine.fuzz.carts` (version 1's shapes), which
:mod:`gpu_engine.fuzz.v2_shapes` builds on."""

from __future__ import annotations

import json
import random

from gpu_engine.fuzz.carts import SHAPES, FuzzCart
from gpu_engine.fuzz.v2_shapes import V2_SHAPES, v2_shape


def shape_names(version: str = "1") -> tuple[str, ...]:
    """The shapes of contract version ``"1"``, ``"2"`` (:mod:`gpu_engine.fuzz.v2_shapes`,
    named ``v2-*``) or ``"all"``."""
    return {"1": tuple(SHAPES), "2": tuple(V2_SHAPES), "all": (*SHAPES, *V2_SHAPES)}[version]


def fuzz_cart(seed: int, index: int, shapes: tuple[str, ...] | None = None) -> FuzzCart:
    """Cart ``index`` of the run seeded ``seed``: the same pair gives the same cart on any
    machine (``random.Random`` seeded by a string hashes it with SHA-512, not ``hash()``).
    The shape is drawn with one ``random()`` call whatever ``shapes`` holds, so the cart of a
    ``(seed, index)`` is reproduced by naming its shape alone."""
    rng = random.Random(f"gpu_engine.fuzz:{seed}:{index}")
    names = list(shapes or SHAPES)
    weights = [SHAPES[n][1] if n in SHAPES else V2_SHAPES[n][1] for n in names]
    shape = rng.choices(names, weights=weights)[0]
    cart = SHAPES[shape][0](rng) if shape in SHAPES else v2_shape(shape, rng)
    return FuzzCart(key=f"{seed}:{index}", shape=shape, text=json.dumps(cart), cart=cart)
