"""The GA's driver loop, the same for a population on either device: the first population and
its elite pass, then generations (each followed by an elite pass when the best moved) until the
budget, a stall, ``max_generations`` or a proven lower bound stops it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from gpu_engine.solvers.ga.core import GaConfig

# Generations whose durations predict the next one (the longest of them is assumed).
_TIMING_WINDOW = 4


class Population(Protocol):
    """One device's population: the steps the driver loop calls. A step given a ``deadline``
    (a ``time.perf_counter()`` value) may stop at it with part of its work done, keeping what it
    found, and then sets ``cut`` to the step's name; the driver then stops."""

    device: str
    cut: str | None
    config: GaConfig

    def initialise(self, *, deadline: float | None = None) -> None: ...
    def best(self) -> tuple[int, int]: ...
    def elite(self, slot: int, *, deadline: float | None = None) -> bool: ...
    def generation(self, elite_slot: int, *, deadline: float | None = None) -> None: ...
    def genes(self, slot: int) -> np.ndarray: ...


@dataclass
class GaRun:
    """What a GA run found and how it went."""

    genes: np.ndarray  # compact merchant per line
    total: int
    generations: int
    stop: str  # "budget", "stall", "max_generations" or "bound"
    init_ms: float
    elapsed_ms: float
    history: list[tuple[int, int]] = field(default_factory=list)  # (generation, best total)
    # The step the deadline stopped part-way ("initialise", "elite", "generation", "grow").
    cut: str | None = None


def evolve(
    population: Population,
    *,
    config: GaConfig,
    budget_ms: float | None,
    started: float,
    bound: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> GaRun:
    """The driver loop, the same for both devices (see :mod:`gpu_engine.solvers.ga.solve` for
    the order). ``started`` is the ``clock()`` reading the budget counts from."""
    deadline = None if budget_ms is None else started + budget_ms / 1e3
    population.initialise(deadline=deadline)
    dirty = False
    if not population.cut:
        slot, _ = population.best()
        dirty = population.elite(slot, deadline=deadline)
    slot, best = population.best()
    init_ms = (clock() - started) * 1e3
    history = [(0, best)]
    generation = stalled_from = 0
    durations: list[float] = []
    grow = getattr(population, "grow", None)
    while True:
        size = population.config.population
        grown = _grown_size(config, size, generation - stalled_from) if grow else size
        if grow and grown > size and not population.cut:
            grow(grown, deadline=deadline)
            stalled_from = generation
            durations.clear()  # a larger population's generations take longer
            slot, fit = population.best()
            if fit < best:
                best = fit
                history.append((generation, best))
        stop = "budget" if population.cut else None
        stop = stop or _stop_reason(config, generation, stalled_from, best, bound)
        expected = _next_generation_s(durations)
        if stop is None and deadline is not None and clock() + expected > deadline:
            stop = "budget"
        if stop is not None:
            break
        t0 = clock()
        population.generation(slot, deadline=deadline)
        generation += 1
        slot, fit = population.best()
        if not population.cut and (dirty or fit < best):
            dirty = population.elite(slot, deadline=deadline)
            slot, fit = population.best()
        if fit < best:
            best, stalled_from = fit, generation
            history.append((generation, best))
        durations.append(clock() - t0)
    return GaRun(
        genes=population.genes(slot),
        total=best,
        generations=generation,
        stop=stop,
        init_ms=init_ms,
        elapsed_ms=(clock() - started) * 1e3,
        history=history,
        cut=population.cut,
    )


def _grown_size(config: GaConfig, size: int, stalled: int) -> int:
    """The population's next size: doubled after ``grow_after`` stalled generations, up to
    ``grow_to`` (see :class:`GaConfig`)."""
    if config.grow_to is None or size >= config.grow_to or stalled < config.grow_after:
        return size
    return min(config.grow_to, 2 * size)


def _next_generation_s(durations: list[float]) -> float:
    """The next generation's predicted time: the longest of the last few. A generation
    predicted to end past the deadline is not started (on the CPU, one that runs long anyway
    is cut at the deadline)."""
    return max(durations[-_TIMING_WINDOW:], default=0.0)


def _stop_reason(
    config: GaConfig, generation: int, stalled_from: int, best: int, bound: int | None
) -> str | None:
    if bound is not None and best <= bound:
        return "bound"
    if config.max_generations is not None and generation >= config.max_generations:
        return "max_generations"
    if generation - stalled_from >= config.stall_generations:
        return "stall"
    return None
