"""Levenberg-Marquardt, one layer: a problem built once (:class:`LMProblem`), a backend chosen by one rule
(:func:`select_backend`: torch, numpy or compiled; small CUDA problems on the CPU), one step (:mod:`ggik.ik.lm.core`)
and one outcome (:class:`LMOutcome`) whichever backend runs, ``first_solution`` included."""

from ggik.ik.lm.problem import LMOutcome, LMProblem
from ggik.ik.lm.select import BACKENDS, LMBackend, select_backend

__all__ = ["LMProblem", "LMOutcome", "LMBackend", "BACKENDS", "select_backend"]
