"""IKNet's sizes and training (:class:`IKNetConfig`), one source of its defaults; the method and the meaning of each
size: :mod:`ggik.baselines.iknet`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ggik.baselines.base import check_config

__all__ = ["IKNetConfig", "MIXTURE_WEIGHTS", "NETWORK_FIELDS"]

#: how a primary network's logits become mixture weights
MIXTURE_WEIGHTS = ("softmax", "sparsemax")
#: the config fields that define the network (a fine-tuned model keeps them)
NETWORK_FIELDS = (
    "hyper_width",
    "hyper_layers",
    "embedding",
    "primary_hidden",
    "components",
    "mixture_weights",
    "head_gain",
    "min_std",
)


@dataclass(frozen=True)
class IKNetConfig:
    """IKNet's sizes and training (module docstring; defaults CPU-sized, the authors' code in brackets).

    Attributes:
        goal: "position" (the paper's) or "pose".
        hyper_width, hyper_layers: the hypernetwork's hidden layers [1024, 3]; embedding: its output [128].
        primary_hidden: width of each primary network's hidden layer [256]; components: mixture components per
            joint [50; 2 on the planar chains]. mixture_weights: "sparsemax" [the authors'] or "softmax" of the
            logits. head_gain: the generated weights are the projections times head_gain / sqrt(embedding) [1].
            With batch 256, softmax and a gain of 8 learn as the authors' settings at batch 1,024 per step
            (benchmarks/baselines, the ablation table); ``IKNetConfig.reference()`` gives the authors' settings.
        samples: training pairs; steps: the most Adam steps; batch: pairs per step [1024]; lr: Adam's learning
            rate [1e-3]; grad_clip: the largest gradient norm (0: no clipping) [1].
        min_std: [rad] added to each component's standard deviation [1e-7; larger here for float32 sampling].
        validate_every: steps between validations (0: none, the last weights are kept); val_targets, val_samples:
            held-out targets and answers per target of a validation [1,000, 10]; patience: validations without
            improvement before training stops (0: never stops early) [50 epochs].
        seed: the training set, the held-out targets and the init.
    """

    goal: str = "position"
    hyper_width: int = 256
    hyper_layers: int = 3
    embedding: int = 128
    primary_hidden: int = 64
    components: int = 10
    mixture_weights: str = "softmax"
    head_gain: float = 8.0
    samples: int = 100_000
    steps: int = 4000
    batch: int = 256
    lr: float = 1e-3
    grad_clip: float = 1.0
    min_std: float = 1e-4
    validate_every: int = 250
    val_targets: int = 200
    val_samples: int = 10
    patience: int = 0
    seed: int = 0

    @classmethod
    def reference(cls, **changes: Any) -> IKNetConfig:
        """The authors' code's settings (sparsemax weights, gain 1, batch 1024, 1024-wide hypernetwork, primary
        networks 256 wide, 50 components, 1,000 validation targets), with ``changes``."""
        paper = dict(
            mixture_weights="sparsemax",
            head_gain=1.0,
            batch=1024,
            hyper_width=1024,
            primary_hidden=256,
            components=50,
            val_targets=1000,
        )
        return cls(**{**paper, **changes})

    def __post_init__(self) -> None:
        counts = (
            "hyper_width",
            "hyper_layers",
            "embedding",
            "primary_hidden",
            "components",
            "samples",
            "steps",
            "batch",
            "val_targets",
            "val_samples",
        )
        check_config(self, counts, ("lr", "min_std"), True)
        check_config(self, (), ("grad_clip",), False)
        check_config(self, (), ("head_gain",), True)
        if self.batch < 2:
            raise ValueError(f"IKNetConfig.batch must be >= 2 (batch norm needs two pairs), got {self.batch!r}")
        if self.mixture_weights not in MIXTURE_WEIGHTS:
            raise ValueError(
                f"IKNetConfig.mixture_weights must be one of {MIXTURE_WEIGHTS}, got {self.mixture_weights!r}"
            )
        for name in ("validate_every", "patience"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"IKNetConfig.{name} must be an integer >= 0, got {value!r}")
