"""The planner's rate profile: how fast this machine runs each solver.

A profile is a small JSON file written by ``calibrate`` (:mod:`gpu_engine.planning.calibrate`:
``python -m gpu_engine.planning.calibrate``, or ``python -m gpu_engine calibrate`` through the
CLI). :func:`load_profile` reads, in order: the file named by
``$GPU_ENGINE_PROFILE``; the calibrated profile in the user's cache directory
(``$XDG_CACHE_HOME/gpu_engine/profile.json``, by default ``~/.cache/...``); the defaults that
ship with the package (``default_profile.json``, measured on the lent H200 host and GPU).

Rates are work units per second, overheads milliseconds per call:

* full search: assignments (the cart's complexity);
* subset DP: the engine's step counts (``relaxed_steps``, ``MerchantDPInputs.steps``);
* MILP: a power law in the number of (line, merchant) pairs, one for carts whose merchants have
  no free-shipping threshold or discount switch ("flat") and one for the rest ("switched"),
  fitted to an upper quantile of the measured times so that predictions err on the slow side.
  HiGHS's time on carts of the same size spreads over a factor of ten and more (no cart feature
  tried, lines, merchants, switched merchants or pairs, explains it), so each law also keeps the
  coefficient at a low quantile (``low_coef``): the time a quick instance of that size takes,
  which the planner reads as "a proof may well fit".
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

PROFILE_ENV = "GPU_ENGINE_PROFILE"
DEFAULT_PROFILE_PATH = Path(__file__).with_name("default_profile.json")
FORMAT_VERSION = 1


@dataclass(frozen=True)
class PowerLaw:
    """``ms = coef * x ** power`` (x >= 1); ``low_coef`` the same law at a low quantile of the
    measured times (None: the spread was not measured, the law is its own optimistic bound)."""

    coef: float
    power: float
    low_coef: float | None = None

    def __call__(self, x: float) -> float:
        return self.coef * max(1.0, x) ** self.power

    def optimistic(self, x: float) -> float:
        coef = self.coef if self.low_coef is None else min(self.coef, self.low_coef)
        return coef * max(1.0, x) ** self.power

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PowerLaw:
        low = data.get("low_coef")
        law = cls(float(data["coef"]), float(data["power"]), None if low is None else float(low))
        if not all(math.isfinite(v) and v >= 0 for v in (law.coef, law.power, law.low_coef or 0)):
            raise ValueError(f"power law {data!r} must have finite numbers >= 0")
        return law


# Fields a profile file may lack (written before they existed): their defaults stand.
_OPTIONAL = frozenset({"source", "machine", "flat_overhead_ms", "flat_ms_per_pair"})


@dataclass(frozen=True)
class RateProfile:
    """Measured speeds of this machine's solvers (see the module docstring)."""

    cpu_full_rate: float
    cpu_full_overhead_ms: float
    gpu_full_rate: float
    gpu_full_overhead_ms: float
    relaxed_dp_rate: float
    cpu_dp_rate: float
    gpu_dp_rate: float
    dp_overhead_ms: float
    gpu_dp_overhead_ms: float
    milp_flat: PowerLaw
    milp_switched: PowerLaw
    # Model build and HiGHS set-up of a tiny cart.
    milp_overhead_ms: float
    # The GA's set-up before its first generation, per line of the cart (ms).
    ga_cpu_init_ms_per_line: float
    ga_gpu_init_ms: float
    # A typical GPU job, to turn a queue depth into a wait.
    gpu_job_ms: float
    # The flat-cart solver's root (:mod:`gpu_engine.solvers.flat`): ms per call and per (line,
    # merchant) pair. Not calibrated yet: twice what this VM measured on ISHOP-U (0.19-0.23 ms
    # at 50-75 pairs, 0.37-0.51 ms at 900-1,440), for every profile.
    flat_overhead_ms: float = 0.3
    flat_ms_per_pair: float = 0.0006
    source: str = "default"
    machine: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["format"] = FORMAT_VERSION
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RateProfile:
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"profile format {data.get('format')!r}, expected {FORMAT_VERSION}")
        values = {}
        for f in fields(cls):
            if f.name not in data:
                if f.name in _OPTIONAL:
                    continue
                raise ValueError(f"profile lacks {f.name!r}")
            value = data[f.name]
            if f.name in ("milp_flat", "milp_switched"):
                value = PowerLaw.from_dict(value)
            elif f.name not in ("source", "machine"):
                value = float(value)
                if not math.isfinite(value) or value < 0:
                    raise ValueError(f"profile {f.name!r} must be a finite number >= 0")
            values[f.name] = value
        return cls(**values)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        tmp.replace(path)


def user_profile_path() -> Path:
    """Where ``calibrate`` writes by default and :func:`load_profile` looks second."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "gpu_engine" / "profile.json"


def read_profile(path: Path) -> RateProfile:
    return RateProfile.from_dict(json.loads(Path(path).read_text()))


_parsed: dict[tuple, RateProfile] = {}


def _read_cached(path: Path) -> RateProfile:
    """``read_profile`` memoised on the file's identity: every Solution's estimates read the
    rates, and a rewritten file (``calibrate`` replaces it) is read again."""
    st = path.stat()
    key = (str(path), st.st_ino, st.st_mtime_ns, st.st_size)
    profile = _parsed.get(key)
    if profile is None:
        profile = read_profile(path)
        _parsed.clear()  # one file is in force at a time
        _parsed[key] = profile
    return profile


def load_profile() -> RateProfile:
    """The profile in force (see the module docstring). A named file that is missing or bad is
    an error; a bad cached file falls back to the package defaults."""
    named = os.environ.get(PROFILE_ENV)
    if named:
        return _read_cached(Path(named))
    cached = user_profile_path()
    if cached.is_file():
        try:
            return _read_cached(cached)
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return _read_cached(DEFAULT_PROFILE_PATH)
