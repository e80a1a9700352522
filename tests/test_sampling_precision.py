"""The sampler's precision: bf16 autocast only where the device computes bf16 natively (an AVX2-only CPU emulates it,
several times slower than float32), float32 otherwise; explicit choices are honoured."""

from __future__ import annotations

import os
import subprocess
import sys

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
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    assert native_bf16("cpu") is expected and native_bf16(torch.device("cpu")) is expected


@pytest.mark.parametrize(
    "capability, expected",
    [("AVX512", True), ("AVX2", False), ("DEFAULT", False), ("NO AVX", False), ("SVE256", False), ("VSX", False)],
)
def test_native_bf16_needs_kernels_dispatched_at_avx512(monkeypatch, capability, expected):
    """A CPU with AVX512-BF16 and AMX computes bf16 natively only where torch dispatches its AVX512 kernels
    (ATEN_CPU_CAPABILITY=avx2, as CI sets it to emulate a lesser CPU, dispatches AVX2 ones)."""
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True, raising=False)
    assert native_bf16("cpu") is expected


def test_aten_cpu_capability_avx2_switches_bf16_off():
    """The variable itself, in a fresh process (torch reads it once, at start-up)."""
    code = (
        "import torch; from ggik.ik.sampling import native_bf16; "
        "print(torch.backends.cpu.get_cpu_capability(), native_bf16('cpu'))"
    )
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "avx2"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    capability, native = out.split()
    assert capability in ("AVX2", "DEFAULT", "NO AVX") and native == "False"  # AVX2, or lower on a lesser CPU


def test_native_bf16_without_the_probes_is_false(monkeypatch):
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
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
