"""Rate profiles: the packaged defaults, saving and loading, and calibration's pieces."""

import dataclasses
import json

import pytest

from gpu_engine.planning import rates
from gpu_engine.planning.calibrate import fit_power_law, measure_dp, measure_full_search
from gpu_engine.planning.profile import (
    DEFAULT_PROFILE_PATH,
    PROFILE_ENV,
    PowerLaw,
    load_profile,
    read_profile,
    user_profile_path,
)


def test_the_packaged_default_profile_is_valid():
    profile = read_profile(DEFAULT_PROFILE_PATH)
    assert profile.cpu_full_rate > 0 and profile.gpu_full_rate > profile.cpu_full_rate
    assert profile.milp_switched(1000) > profile.milp_flat(1000)


def test_round_trip_and_lookup_order(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    assert load_profile().source == read_profile(DEFAULT_PROFILE_PATH).source
    calibrated = read_profile(DEFAULT_PROFILE_PATH)
    calibrated = type(calibrated).from_dict({**calibrated.to_dict(), "source": "calibrated"})
    calibrated.save(user_profile_path())
    assert load_profile() == calibrated
    named = tmp_path / "named.json"
    named.write_text(json.dumps({**calibrated.to_dict(), "source": "named"}))
    monkeypatch.setenv(PROFILE_ENV, str(named))
    assert load_profile().source == "named"


def test_a_broken_cached_profile_falls_back_to_the_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    user_profile_path().parent.mkdir(parents=True)
    user_profile_path().write_text("{not json")
    assert load_profile() == read_profile(DEFAULT_PROFILE_PATH)


def test_bad_values_are_refused():
    data = read_profile(DEFAULT_PROFILE_PATH).to_dict()
    with pytest.raises(ValueError):
        type(read_profile(DEFAULT_PROFILE_PATH)).from_dict({**data, "cpu_full_rate": -1})
    with pytest.raises(ValueError):
        type(read_profile(DEFAULT_PROFILE_PATH)).from_dict({**data, "format": 99})


def test_power_law_fit_sits_at_the_upper_quantile():
    pairs = [10, 20, 40, 80, 160, 320]
    times = [0.5 * p**1.5 for p in pairs]
    law = fit_power_law(pairs, times, 0.8)
    assert law.power == pytest.approx(1.5, abs=1e-6)
    assert law(100) == pytest.approx(0.5 * 100**1.5, rel=1e-6)
    noisy = [t * (2.0 if k % 2 else 1.0) for k, t in enumerate(times)]
    assert fit_power_law(pairs, noisy, 0.8)(100) > fit_power_law(pairs, noisy, 0.5)(100)
    assert PowerLaw(2.0, 1.0)(0.5) == 2.0  # x below 1 counts as 1


def test_power_law_keeps_the_quick_end_of_the_spread():
    pairs = [10, 20, 40, 80, 160, 320] * 2
    times = [0.5 * p**1.5 * (8.0 if (k + k // 6) % 2 else 1.0) for k, p in enumerate(pairs)]
    law = fit_power_law(pairs, times, 0.8, low_quantile=0.1)
    assert law.low_coef is not None and law.optimistic(100) < law(100)
    assert law.optimistic(100) / law(100) == pytest.approx(1 / 8, rel=0.05)
    # Without a measured spread the law is its own optimistic bound.
    assert PowerLaw(2.0, 1.0).optimistic(10) == PowerLaw(2.0, 1.0)(10) == 20.0
    assert PowerLaw(2.0, 1.0, low_coef=5.0).optimistic(10) == 20.0  # never above the law


def test_the_spread_round_trips_and_old_profiles_still_load():
    data = read_profile(DEFAULT_PROFILE_PATH).to_dict()
    profile = type(read_profile(DEFAULT_PROFILE_PATH)).from_dict(data)
    assert profile.milp_switched.low_coef == data["milp_switched"]["low_coef"]
    old = {**data, "milp_switched": {"coef": 0.01, "power": 2.0}}
    assert type(profile).from_dict(old).milp_switched == PowerLaw(0.01, 2.0)
    with pytest.raises(ValueError):
        type(profile).from_dict({**data, "milp_flat": {"coef": 1.0, "power": 1.0, "low_coef": -1}})


def test_cpu_rates_are_measured():
    full = measure_full_search(gpu=False)
    assert full["cpu_full_rate"] > 1e6 and full["cpu_full_overhead_ms"] >= 0
    dp = measure_dp(gpu=False)
    assert dp["cpu_dp_rate"] > 1e5 and dp["relaxed_dp_rate"] > 1e5


def test_the_named_profile_wins_over_a_calibrated_one_in_the_cache(tmp_path, monkeypatch):
    # What tests/conftest.py relies on: GPU_ENGINE_PROFILE pins the packaged defaults whatever
    # `calibrate` left in the developer's cache.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    calibrated = dataclasses.replace(read_profile(DEFAULT_PROFILE_PATH), cpu_full_rate=1.0)
    calibrated.save(user_profile_path())
    assert load_profile().cpu_full_rate == 1.0
    monkeypatch.setenv(PROFILE_ENV, str(DEFAULT_PROFILE_PATH))
    assert load_profile() == read_profile(DEFAULT_PROFILE_PATH)


def test_estimates_and_slicing_rates_come_from_the_profile(tmp_path, monkeypatch):
    named = tmp_path / "profile.json"
    base = read_profile(DEFAULT_PROFILE_PATH)
    dataclasses.replace(base, cpu_full_rate=2.0e8, gpu_full_rate=4.0e11).save(named)
    monkeypatch.setenv(PROFILE_ENV, str(named))
    monkeypatch.setattr(rates, "_measured", {})
    assert rates.cpu_full_rate() == 2.0e8 and rates.gpu_full_rate() == 4.0e11
    estimates = rates.full_search_estimates(4 * 10**8)
    assert estimates["cpu_full_search_s"] == 2.0 and estimates["gpu_full_search_s"] == 1e-3
    # A rewritten profile is read again (calibrate replaces the file).
    dataclasses.replace(base, cpu_full_rate=1.0e8, gpu_full_rate=4.0e11).save(named)
    assert rates.cpu_full_rate() == 1.0e8
    # A full search this process ran and timed overrides the profile.
    rates.record_cpu_full_rate(3.0e8)
    assert rates.cpu_full_rate() == 3.0e8
