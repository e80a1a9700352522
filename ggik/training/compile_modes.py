"""torch.compile modes for training, and which of them can train a model on a device.

:func:`check_compile_mode` is the trainer's check of ``TrainConfig.compile``, before anything is compiled.
"""

from __future__ import annotations

import torch

from ggik.errors import GGIKError
from ggik.nn.cvae import ModelConfig

__all__ = ["COMPILE_MODES", "CUDA_GRAPH_MODES", "check_compile_mode"]

COMPILE_MODES = ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
#: the torch.compile modes that capture CUDA graphs on a CUDA device
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune")


def check_compile_mode(mode: str, device: torch.device, model: ModelConfig) -> None:
    """Raise :class:`GGIKError` for a torch.compile ``mode`` that cannot train ``model`` on ``device``.

    CUDA graphs (``reduce-overhead``, ``max-autotune`` on CUDA) failed to capture the training step of a model with
    full Gauss-Newton moves on an H200 (torch 2.11; the capture stops at ``aten._linalg_solve_ex``, the batched LU
    solve, pytorch/pytorch#96632: benchmarks/training_speed/results/step_time_h200_reduce_overhead.log; in v7's
    sittings on an H100 it stopped earlier, at a host sync since removed). A failed capture leaves the CUDA context
    unusable, so the run would crash deep inside torch after compiling. ``gn_solver="jacobi"`` (closed-form 3 x 3
    solves) and ``gn_steps=0`` are not refused; neither has been captured on a GPU yet.
    """
    if mode not in COMPILE_MODES:
        raise GGIKError(f"compile must be one of {COMPILE_MODES}, got {mode!r}")
    if device.type == "cuda" and mode in CUDA_GRAPH_MODES and model.gn_steps > 0 and model.gn_solver == "full":
        raise GGIKError(
            f"compile={mode} uses CUDA graphs, which cannot capture this model's training step (its Gauss-Newton "
            "moves solve linear systems that CUDA graph capture refuses; measured on an H200): use "
            "compile=default (or max-autotune-no-cudagraphs)"
        )
