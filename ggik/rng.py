"""Named random streams: every seeded draw of ggik comes from ``step_generator(seed, KEY, ...)``.

A stream is a torch generator seeded from a tuple of integers through numpy's ``SeedSequence``, so that
(seed, step, rank) of a training batch, or (seed, what, robot) of an evaluation, give independent,
reproducible streams without any state to save. The second key says *what* the stream is for; these
constants name them. Their values are fixed forever: changing one changes every number measured with it.
The studies of ``benchmarks/`` (not shipped) name their own streams beside these (``benchmarks/common/streams.py``).
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch

__all__ = ["step_generator", "name_key"]

# -- data and training
PROBLEM_GOALS = 0x5E7  #: goal configurations of a ProblemSet (and of the generalisation families' robots)
VALIDATION_ROBOTS = 0xDA7A  #: random robots of a training run's validation set
STACKED_RANDOM_ROBOTS = 0x5A7  #: random and randomised robots of a stacked training batch
# -- evaluation suite (ggik eval)
ACCURACY_SAMPLES = 1  #: model samples of the accuracy table
ACCURACY_REFERENCE = 2  #: random starts of the reference solutions (MMD)
SEEDING_SAMPLES = 3  #: model samples used as LM/SLSQP seeds
SEEDING_STARTS = 4  #: random starts of LM/SLSQP
LIMITS_SAMPLES = 5  #: model samples of the joint-limits table
GENERALISATION_SAMPLES = 6  #: model samples of the generalisation table
GOAL_KINDS_IKNET = 7  #: model samples of the IKNet-protocol columns of the goal-kind table (ggik eval goals)
RANDOM_FAMILY = 0x6E7  #: robots of the random families of the generalisation table
PATH_BENCH = 0x9A8  #: random starts and model noise of the path-following benchmark (ggik eval paths)
CONVENTION_VARIANTS = 0xC0F  #: the transforms of the file variants of the conventions table (ggik eval conventions)
CONVENTION_SAMPLES = 0xC05  #: model samples of the conventions table
PAPER_GOALS = 0x9A9E  #: goal configurations of the GGIK paper's protocol (ggik eval paper, --protocol paper), per arm


def step_generator(*keys: int) -> torch.Generator:
    """A CPU torch generator seeded from integer keys (e.g. seed, stream, step, rank) through numpy's SeedSequence."""
    state = np.random.SeedSequence([int(k) for k in keys]).generate_state(1, np.uint64)[0]
    return torch.Generator().manual_seed(int(state) & 0x7FFF_FFFF_FFFF_FFFF)


def name_key(name: str) -> int:
    """A key for :func:`step_generator` that names a thing (e.g. a robot) rather than its place in a list: the first
    8 bytes of the SHA-256 of ``name`` in UTF-8, as an unsigned integer. The same in every process and on every
    machine (Python's ``hash()`` of a string is salted per process)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")
