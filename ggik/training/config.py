"""The typed training configuration: these dataclasses hold every default of a training run.

The defaults are the recipe of the shipped model, trained from scratch: its architecture (:class:`ModelConfig`),
its robots and goal kinds (:class:`DataConfig`), AdamW at a constant 1e-3 after 100 warm-up steps, the KL weight
warmed up over 300 steps; but the graph convention, "frames", where the shipped v10 is v9 fine-tuned on "canonical"
graphs (``train/configs/canonical.yaml``; a recipe from scratch on them is untried). ``train/configs/default.yaml``
adds the budget. YAML files in ``train/configs`` and ``--set key=value`` only override them
(:mod:`ggik.typed_config`: unknown keys are errors); a checkpoint stores the full dict, and
``from_dict(TrainConfig, load_checkpoint(path)["config"])`` rebuilds it (keys an old file predates read as
:data:`ggik.checkpoint.IMPLIED_CONFIG` says, not as these defaults).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ggik.data import DataConfig
from ggik.nn.cvae import ModelConfig

__all__ = ["OptimConfig", "LossConfig", "ValConfig", "TrainConfig", "DataConfig", "ModelConfig"]


@dataclass
class OptimConfig:
    lr: float = 1e-3  #: peak learning rate of AdamW
    weight_decay: float = 0.01
    grad_clip: float = 1.0  #: max global gradient norm (0 = off)
    warmup_steps: int = 100  #: linear warm-up from 0
    #: "constant" (a budget can grow on --resume) or "cosine" (to min_lr_ratio * lr at the last step)
    schedule: str = "constant"
    min_lr_ratio: float = 0.05  #: the cosine schedule's last learning rate, relative to lr


@dataclass
class LossConfig:
    anchor_gain: float = 10.0  #: weight of the anchor squared error [1/m^2]
    #: weight of the free-node squared error [1/m^2] (a Gaussian likelihood of sigma = 1/sqrt(2 rec_gain) = 2.2 cm)
    rec_gain: float = 1000.0
    beta: float = 1.0  #: final KL weight
    beta_warmup_steps: int = 300  #: beta rises linearly from 0 over these steps
    kl_samples: int = 1  #: Monte-Carlo samples of the KL (the prior is a mixture)
    #: weight [1/m^2] of the known-distance error of a point set decoded from a prior sample (0 = off)
    prior_gain: float = 0.0
    #: if > 0, rec_gain rises geometrically to this value over rec_gain_steps (a likelihood that tightens)
    rec_gain_final: float = 0.0
    rec_gain_steps: int = 0  #: steps of that rise (the schedule of :func:`ggik.training.schedules.rec_gain_at`)
    kl_free_nats: float = 0.0  #: free bits: a graph's KL below this many nats costs nothing (0 = off)


@dataclass
class ValConfig:
    every: int = 500  #: validate every N steps (0 = never)
    problems_per_robot: int = 30
    samples: int = 32  #: samples per problem for raw success (best of S within 1 cm and 1 degree)
    random_robots: int = 0  #: random robots added to the validation set (DOFs from data.random_dofs)
    #: link-randomised training robots added to the validation set (``randomize_links`` at ``randomize_fraction``)
    randomized_robots: int = 0
    randomize_fraction: float = 0.2  #: their per-link scale range r, U[1 - r, 1 + r]
    #: training robots under another file's conventions (``random_reframing``: joint frames, zero angles, mounting and
    #: tool all moved) added to the validation set
    reframed_robots: int = 0
    seed: int = 12345
    #: goal kinds validated (the same problems as each kind)
    goal_kinds: list[str] = field(default_factory=lambda: ["pose", "position"])
    #: how the goals are drawn: "ours", q uniform within the limits; "paper", the GGIK paper's Table 1 (q uniform in
    #: [-pi, pi], the last joint 0, limits ignored: the goals of ``ggik eval paper --seed <val.seed>``)
    protocol: str = "ours"


@dataclass
class TrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    val: ValConfig = field(default_factory=ValConfig)
    steps: int = 10000  #: total optimiser steps
    checkpoint_every: int = 200
    log_every: int = 10
    #: bfloat16 autocast for the matrix work where the device computes bf16 natively (CUDA, CPUs with AVX512-BF16 or
    #: AMX: measured ~1.5x faster); ignored elsewhere (emulated bf16 sampled 1.9-5.7x slower than float32, AVX2 CPU)
    bf16: bool = True
    threads: int = 0  #: torch CPU threads (0 = torch's default)
    #: on a CPU, forward and backward passes of at most this many examples, their gradients accumulated into the
    #: batch's one step (:func:`ggik.training.objective.micro_batches`; 0 = one pass). 32 ran 2.4x the examples/s of
    #: one pass of 512 on 2 cores (benchmarks/training_speed). Ignored on CUDA, where one pass is fastest.
    cpu_micro_batch: int = 32
    #: torch.compile of the model for training: "eager" (none) or a torch.compile mode ("default", "reduce-overhead":
    #: CUDA graphs, "max-autotune"); the stacked sampler keeps every batch's shapes fixed, so it compiles once. On
    #: CUDA the shipped architecture trains with "default": CUDA graphs cannot capture its Gauss-Newton moves
    #: (:func:`ggik.training.compile_modes.check_compile_mode` refuses them)
    compile: str = "eager"
    seed: int = 0  #: seed of model initialisation and of the training noise
