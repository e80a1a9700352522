"""The lab's named random streams, beside the library's (:mod:`ggik.rng`): the second key of
``step_generator(seed, KEY, ...)`` in the studies. Their values are fixed forever: changing one changes every
number measured with it. The studies also draw from the suite's streams (e.g. ``ggik.rng.SEEDING_SAMPLES``) where
they measure on the suite's goals."""

from __future__ import annotations

__all__ = [
    "SOLVERS_GGIK_SAMPLES",
    "SOLVERS_RANDOM_STARTS",
    "SOLVERS_SINGLE_START",
    "BENCH_RANDOM_ROBOT",
    "SAMPLING_GOALS",
    "SAMPLING_NOISE",
    "RAW_SUCCESS_BASELINE",
    "PATH_SUITE",
    "LATENCY_GOALS",
    "LATENCY_STARTS",
]

SOLVERS_GGIK_SAMPLES = 10  #: model samples of the solver benchmark
SOLVERS_RANDOM_STARTS = 20  #: random starts of the solver benchmark
SOLVERS_SINGLE_START = 21  #: single random starts (first-solution timing) of the solver benchmark
BENCH_RANDOM_ROBOT = 0xD0F  #: random robots (``randomN``) of the studies
SAMPLING_GOALS = 0x60A1  #: goals of the sampling-time study
SAMPLING_NOISE = 0x5A  #: model noise of the sampling-time study (and of the recipe study's sampling timings)
RAW_SUCCESS_BASELINE = 0xBA5E  #: uniform random configurations, the baseline of the raw-success study
PATH_SUITE = 0x9A7  #: home configurations and shapes of the path-following suite (benchmarks/path_suite)
LATENCY_GOALS = 0x1A7  #: goal configurations of the single-call latency study (benchmarks/solvers/latency.py)
LATENCY_STARTS = 0x1A8  #: random starts of the single-call latency study
