"""The sampler's precision: bf16 autocast only where the device computes bf16 natively (an AVX2-only CPU emulates it,
several times slower than float32), float32 otherwise; explicit choices are honoured."""

from __future__ import annotations

import pytest
import torch

from ggik import Robot, RobotGraph
from ggik.evaluation.report import cpu_model, machine_description
from ggik.ik import sampling
from ggik.ik.sampling import SamplingOptions, native_bf16, sample_joint_angles
from ggik.nn.cvae import GGIKModel, ModelConfig


def tiny_model() -> GGIKModel:
    torch.manual_seed(0)
    cfg = ModelConfig(
        dim=8, hidden=16, enc_layers=1, dec_layers=1, latent=2, prior_components=2, residual_inputs=False, gn_steps=0
    )
    return GGIKModel(cfg).eval()


@pytest.mark.parametrize(
    "avx512_bf16, amx, expected", [(False, False, False), (True, False, True), (False, True, True)]
)
def test_native_bf16_on_a_cpu_follows_its_instructions(monkeypatch, avx512_bf16, amx, expected):
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    assert native_bf16("cpu") is expected and native_bf16(torch.device("cpu")) is expected


def test_native_bf16_without_the_probes_is_false(monkeypatch):
    monkeypatch.delattr(torch.cpu, "_is_avx512_bf16_supported", raising=False)
    monkeypatch.delattr(torch.cpu, "_is_amx_tile_supported", raising=False)
    assert native_bf16("cpu") is False
    assert native_bf16("meta") is False


@pytest.mark.parametrize("native", [False, True])
def test_default_precision_is_the_devices_native_one(monkeypatch, native):
    model, robot = tiny_model(), Robot.from_name("ur10")
    graph = RobotGraph.from_robot(robot)
    T = robot.fk(robot.sample_q(3, torch.Generator().manual_seed(1)))
    monkeypatch.setattr(sampling, "native_bf16", lambda device: native)
    default = sample_joint_angles(model, graph, T, 4, generator=torch.Generator().manual_seed(2))
    chosen = sample_joint_angles(
        model, graph, T, 4, generator=torch.Generator().manual_seed(2), options=SamplingOptions(bf16=native)
    )
    other = sample_joint_angles(
        model, graph, T, 4, generator=torch.Generator().manual_seed(2), options=SamplingOptions(bf16=not native)
    )
    torch.testing.assert_close(default.points, chosen.points, rtol=0, atol=0)
    assert not torch.equal(default.points, other.points)  # the choice is real: bf16 rounds the network's work


def test_tables_name_the_cpu_and_its_bf16_support():
    text = machine_description()
    assert cpu_model() in text and torch.backends.cpu.get_cpu_capability() in text
    assert ("no native bf16" in text) is (not native_bf16("cpu"))
