"""Which torch.compile modes the trainer accepts where: CUDA graphs are refused, with a clear error, for a model whose
Gauss-Newton moves solve full linear systems (the capture fails at their batched linear solve on an H200)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from ggik import GGIKError
from ggik.nn.cvae import ModelConfig
from ggik.training.compile_modes import COMPILE_MODES, CUDA_GRAPH_MODES, check_compile_mode
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer

CUDA, CPU = torch.device("cuda"), torch.device("cpu")
SHIPPED = ModelConfig()


@pytest.mark.parametrize("mode", CUDA_GRAPH_MODES)
def test_cuda_graphs_are_refused_for_full_gauss_newton_moves_on_cuda(mode):
    assert SHIPPED.gn_steps > 0 and SHIPPED.gn_solver == "full"
    with pytest.raises(GGIKError, match=f"compile={mode} uses CUDA graphs.*use compile=default"):
        check_compile_mode(mode, CUDA, SHIPPED)


@pytest.mark.parametrize("mode", COMPILE_MODES)
def test_every_mode_is_accepted_on_a_cpu(mode):
    check_compile_mode(mode, CPU, SHIPPED)  # no CUDA graphs on a CPU: reduce-overhead compiles as default


@pytest.mark.parametrize("mode", [m for m in COMPILE_MODES if m not in CUDA_GRAPH_MODES])
def test_modes_without_cuda_graphs_are_accepted_on_cuda(mode):
    check_compile_mode(mode, CUDA, SHIPPED)


@pytest.mark.parametrize(
    "model", [dataclasses.replace(SHIPPED, gn_solver="jacobi"), dataclasses.replace(SHIPPED, gn_steps=0)]
)
def test_models_without_a_full_solve_may_try_cuda_graphs(model):
    for mode in CUDA_GRAPH_MODES:
        check_compile_mode(mode, CUDA, model)


def test_an_unknown_mode_is_a_clear_error():
    with pytest.raises(GGIKError, match="compile must be one of"):
        check_compile_mode("fast", CPU, SHIPPED)


def test_the_trainer_checks_its_mode_before_touching_the_device(tmp_path):
    cfg = TrainConfig()
    cfg.compile = "fastest"
    with pytest.raises(GGIKError, match="compile must be one of"):
        Trainer(cfg, tmp_path / "run", progress=False)
    cfg.compile = "reduce-overhead"  # on this CPU-only machine CUDA would fail at once: the refusal comes first
    with pytest.raises(GGIKError, match="compile=reduce-overhead uses CUDA graphs"):
        Trainer(cfg, tmp_path / "run", device="cuda", progress=False)
    assert not (tmp_path / "run").exists()
