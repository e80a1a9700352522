"""The sampler's price: pass sizes by device, the compiled decoder, narrower decoders and their distillation."""

from __future__ import annotations

import dataclasses
import math
import warnings

import pytest
import torch

from ggik.checkpoint import load_model
from ggik.errors import GGIKError
from ggik.ik.sampling import (
    CPU_GRAPHS_PER_PASS,
    EDGE_TENSORS_AT_PEAK,
    SamplingOptions,
    default_graphs_per_pass,
    sample_joint_angles,
)
from ggik.kinematics import Robot
from ggik.nn.compiled_decode import MIN_PADDED_ROWS, padded_rows
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.training.distill import Distillation, DistillConfig, export_student

TINY = ModelConfig(dim=16, hidden=32, enc_layers=1, dec_layers=2, latent=4, prior_components=2, graph="canonical")


def test_a_narrower_decoder_has_its_own_widths_and_the_same_encoders():
    wide, narrow = GGIKModel(TINY), GGIKModel(dataclasses.replace(TINY, dec_dim=8, dec_hidden=12, dec_layers=3))
    assert (
        narrow.decoder.layers[0].dim == 8 and narrow.decoder.layers[0].hidden == 12 and len(narrow.decoder.layers) == 3
    )
    assert narrow.dec_in.in_features == wide.dec_in.in_features and narrow.dec_in.out_features == 8
    enc = lambda m: {k: v.shape for k, v in m.state_dict().items() if k.startswith(("enc_", "prior", "embed"))}  # noqa: E731
    assert enc(wide) == enc(narrow)
    assert narrow.num_parameters() < wide.num_parameters()
    with pytest.raises(ValueError, match="dec_dim"):
        dataclasses.replace(TINY, dec_dim=-1).check()


def test_pass_size_is_cache_sized_on_a_cpu_and_memory_sized_on_a_gpu():
    model = GGIKModel(TINY)
    assert default_graphs_per_pass(model, 18, "cpu") == CPU_GRAPHS_PER_PASS
    per_graph = EDGE_TENSORS_AT_PEAK * 4 * 18 * 18 * TINY.hidden
    free = 80 * 2**30
    got = default_graphs_per_pass(model, 18, "cuda", free_bytes=free)
    assert got == int(0.25 * free) // per_graph and got > 32_000  # thousands of goals of 32 samples per pass
    assert default_graphs_per_pass(model, 18, "cuda", free_bytes=1) == CPU_GRAPHS_PER_PASS  # never below the CPU's
    assert default_graphs_per_pass(model, 36, "cuda", free_bytes=free) < got  # larger graphs, fewer per pass


def _raw(model: GGIKModel, n: int, samples: int = 8, seed: int = 1, **kw):
    """Raw samples of ``model`` for ``n`` Panda goals; ``kw``: :class:`SamplingOptions`."""
    robot = Robot.from_name("panda")
    T = robot.fk(robot.sample_q(n, torch.Generator().manual_seed(0)))
    options = SamplingOptions(**kw)
    generator = torch.Generator().manual_seed(seed)
    return sample_joint_angles(model, model.graph(robot), T, samples, generator=generator, options=options)


def test_the_samples_do_not_depend_on_the_pass_size():
    """The latents of a call are drawn before its passes: the same generator gives the same samples whatever the pass
    size (on a CPU or a memory-sized GPU pass). 13 goals of 2 samples: 13, 5, 3 and 1 passes."""
    model = GGIKModel(TINY).eval()
    runs = [_raw(model, 13, samples=2, bf16=False, graphs_per_pass=n) for n in (1, 7, 12, 10**6)]
    for run in runs[:-1]:
        torch.testing.assert_close(run.points, runs[-1].points, rtol=0, atol=1e-5)
        torch.testing.assert_close(run.pos_err, runs[-1].pos_err, rtol=0, atol=1e-5)
    other = _raw(model, 13, samples=2, bf16=False, graphs_per_pass=12, seed=2)
    assert (other.points - runs[-1].points).abs().amax() > 1e-2  # the generator's draws decide the samples
    oversampled = [_raw(model, 13, samples=2, bf16=False, graphs_per_pass=n, oversample=3) for n in (6, 10**6)]
    torch.testing.assert_close(oversampled[0].points, oversampled[1].points, rtol=0, atol=1e-5)


def _spy_compile(monkeypatch, rows: list[int], error: Exception | None = None) -> None:
    """torch.compile replaced by the eager function that records the rows of each call (and raises ``error``)."""

    def spy(fn, **kwargs):
        def call(z, problem, node_mask):
            rows.append(z.shape[0])
            if error is not None:
                raise error
            return fn(z, problem, node_mask)

        return call

    monkeypatch.setattr(torch, "compile", spy)


def test_padded_rows_are_a_few_powers_of_two_up_to_a_full_pass():
    assert [padded_rows(g) for g in (1, 16, 17, 100, 129)] == [16, 16, 32, 128, 256]
    assert padded_rows(100, cap=120) == 120 and padded_rows(40, cap=120) == 64 and padded_rows(130, cap=120) == 256


@pytest.mark.parametrize("cap", [None, 16, 100, 120, 128, 1000])
def test_padded_rows_of_every_pass_size_hold_their_rules(cap):
    """For every pass of 1 .. 1100 graphs: at least the graphs; a power of two, the smallest at or above both the
    graphs and MIN_PADDED_ROWS, or else the cap (a full pass) when the graphs fit in it; so padding at most doubles a
    pass of MIN_PADDED_ROWS graphs or more, and the passes up to the cap take at most log2(cap / MIN_PADDED_ROWS) + 2
    shapes."""
    assert MIN_PADDED_ROWS & (MIN_PADDED_ROWS - 1) == 0, "MIN_PADDED_ROWS is a power of two"
    shapes = set()
    for graphs in range(1, 1101):
        rows = padded_rows(graphs, cap)
        power = next(2**k for k in range(32) if 2**k >= max(graphs, MIN_PADDED_ROWS))  # found by search, not bits
        fits = cap is not None and graphs <= cap
        assert rows == (min(power, cap) if fits else power), (graphs, cap, rows)
        assert rows >= graphs and (graphs < MIN_PADDED_ROWS or rows < 2 * graphs)
        if fits:
            shapes.add(rows)
    if cap is not None:
        assert len(shapes) <= math.log2(cap / MIN_PADDED_ROWS) + 2, sorted(shapes)


def test_a_compiled_decoder_sees_a_few_shapes_for_any_goal_count_and_drops_the_padding(monkeypatch):
    """Compiled, every pass is padded to a power of two rows or a full pass (the last goal repeated, then dropped):
    goal counts 1..24 of 8 samples in passes of 128 graphs make 4 shapes, not 24. The compile is replaced by the
    eager decoder that records its batch sizes (the real inductor compile is covered by the benchmark,
    benchmarks/sampler_price, and the slow test below)."""
    model = GGIKModel(TINY).eval()
    want = _raw(model, 20, bf16=False, graphs_per_pass=128)  # passes of 16 goals of 8 samples: 16 + 4
    rows: list[int] = []
    _spy_compile(monkeypatch, rows)
    model.compile_decoder()
    got = _raw(model, 20, bf16=False, graphs_per_pass=128)
    assert rows == [128, 32]
    assert got.q.shape == want.q.shape == (20, 8, 7)
    torch.testing.assert_close(got.points, want.points, rtol=0, atol=1e-5)
    torch.testing.assert_close(got.pos_err, want.pos_err, rtol=0, atol=1e-5)
    rows.clear()
    for goals in range(1, 25):
        _raw(model, goals, bf16=False, graphs_per_pass=128)
    assert sorted(set(rows)) == [16, 32, 64, 128]


def test_a_failing_compile_warns_once_and_samples_eagerly(monkeypatch):
    from torch._dynamo.exc import BackendCompilerFailed

    model = GGIKModel(TINY).eval()
    want = _raw(model, 5, bf16=False, graphs_per_pass=16)
    rows: list[int] = []
    _spy_compile(monkeypatch, rows, BackendCompilerFailed("inductor", RuntimeError("no C++ compiler"), None))
    model.compile_decoder()
    assert model.decoder_compiled
    with pytest.warns(UserWarning, match="(?s)decoder failed, sampling eagerly.*no C\\+\\+ compiler"):
        got = _raw(model, 5, bf16=False, graphs_per_pass=16)
    assert not model.decoder_compiled and rows == [16]
    torch.testing.assert_close(got.q, want.q, rtol=0, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _raw(model, 5, bf16=False, graphs_per_pass=16)  # eager now: no second warning
    assert rows == [16]


@pytest.mark.parametrize("error", [ValueError("bad input"), torch.OutOfMemoryError("CPU out of memory")])
def test_other_errors_of_the_compiled_decoder_propagate_and_keep_it_compiled(monkeypatch, error):
    model = GGIKModel(TINY).eval()
    _spy_compile(monkeypatch, [], error)
    model.compile_decoder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no warning
        with pytest.raises(type(error), match=str(error)):
            _raw(model, 2, bf16=False)
    assert model.decoder_compiled


def test_a_compile_error_on_an_input_the_eager_decoder_refuses_raises_the_eager_error(monkeypatch):
    """A compile error whose input the eager decoder refuses too is the input's fault: its error propagates and the
    decoder stays compiled."""
    from torch._dynamo.exc import TorchRuntimeError

    model = GGIKModel(TINY).eval()
    _spy_compile(monkeypatch, [], TorchRuntimeError("shape mismatch while tracing"))
    model.compile_decoder()

    def refuses(*args):
        raise ValueError("the eager decoder refuses this input")

    monkeypatch.setattr(model, "decode", refuses)
    with pytest.raises(ValueError, match="eager decoder refuses"):
        _raw(model, 2, bf16=False)
    assert model.decoder_compiled


def test_the_solver_keeps_the_model_as_given(monkeypatch):
    """GGIK(model) neither compiles nor un-compiles the model's decoder, nor changes its train/eval mode; only
    compile_sampler=True compiles (and keeps a decoder the caller already compiled)."""
    from ggik import GGIK

    _spy_compile(monkeypatch, [])
    compiled = GGIKModel(TINY).compile_decoder()
    callable_before = compiled._compiled_decode
    assert compiled.training
    GGIK(compiled)
    assert compiled.training and compiled.decoder_compiled and compiled._compiled_decode is callable_before
    GGIK(compiled, compile_sampler=True)
    assert compiled._compiled_decode is callable_before
    plain = GGIKModel(TINY).eval()
    GGIK(plain)
    assert not plain.training and not plain.decoder_compiled
    GGIK(plain, compile_sampler=True)
    assert plain.decoder_compiled


@pytest.fixture(scope="module")
def distillation(tiny_ckpt, tmp_path_factory):
    cfg = DistillConfig(dec_dim=8, dec_hidden=16, dec_layers=2, batch_size=4, samples=2, steps=6, gap_problems=8)
    return cfg, tmp_path_factory.mktemp("distill")


def test_distillation_trains_the_decoder_only_resumes_exactly_and_exports_a_model(tiny_ckpt, distillation, tmp_path):
    cfg, _ = distillation
    teacher, _ = load_model(tiny_ckpt)
    once = Distillation(tiny_ckpt, tmp_path / "once", cfg)
    before = {k: v.clone() for k, v in once.student.state_dict().items()}
    once.run(minutes=5, progress=False)
    assert once.step == cfg.steps
    after = once.student.state_dict()
    for k, v in after.items():
        if not k.startswith(("dec_in.", "decoder.", "gn_follow.")):
            torch.testing.assert_close(v, teacher.state_dict()[k], rtol=0, atol=0)  # the teacher's, frozen
    assert any(not torch.equal(after[k], before[k]) for k in after if k.startswith("decoder."))

    Distillation(tiny_ckpt, tmp_path / "halves", cfg).run(minutes=5, progress=False, until_step=3)
    second = Distillation(tiny_ckpt, tmp_path / "halves", cfg)  # a new process would do the same
    assert second.step == 3
    second.run(minutes=5, progress=False)
    for k, v in second.student.state_dict().items():
        torch.testing.assert_close(v, after[k], rtol=0, atol=0)

    out = export_student(once, tmp_path / "student.pt")
    model, ckpt = load_model(out)
    assert model.cfg.dec_dim == 8 and model.cfg.dec_hidden == 16
    assert ckpt["distillation"]["steps"] == cfg.steps and len(ckpt["distillation"]["teacher_sha256"]) == 64
    assert "optimizer" not in ckpt and ckpt["format"] == "ggik-weights/1"
    robot = Robot.from_name("panda")
    raw = sample_joint_angles(model, model.graph(robot), robot.fk(robot.sample_q(2)), 4)
    assert raw.q.shape == (2, 4, 7) and torch.isfinite(raw.pos_err).all()


def test_distillation_refuses_to_resume_another_recipe(tiny_ckpt, tmp_path):
    cfg = DistillConfig(dec_dim=8, dec_hidden=16, dec_layers=2, batch_size=4, samples=2, steps=2, gap_problems=8)
    Distillation(tiny_ckpt, tmp_path, cfg).run(minutes=5, progress=False)
    with pytest.raises(GGIKError, match="another teacher or recipe"):
        Distillation(tiny_ckpt, tmp_path, dataclasses.replace(cfg, lr=5e-4))
    with pytest.raises(ValueError, match="bad distillation config"):
        DistillConfig(gn_steps=5, dec_layers=3).check()


def test_the_solver_samples_through_the_compiled_decoder_when_asked(monkeypatch):
    rows: list[int] = []
    _spy_compile(monkeypatch, rows)
    from ggik import GGIK, SolveConfig
    from ggik.ik import sampling

    monkeypatch.setattr(sampling, "native_bf16", lambda device: False)  # float32: the padded pass rounds alike
    plain, compiled = GGIK.pretrained(), GGIK.pretrained(compile_sampler=True)
    assert not plain.model.decoder_compiled and compiled.model.decoder_compiled
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(3, torch.Generator().manual_seed(0)))
    a = plain.solve(panda, T, SolveConfig(samples=4), generator=torch.Generator().manual_seed(1))
    b = compiled.solve(panda, T, SolveConfig(samples=4), generator=torch.Generator().manual_seed(1))
    assert rows == [16]  # 3 goals x 4 samples, padded
    # the same decoder (compile replaced) on a padded batch: the same samples to float32 rounding
    torch.testing.assert_close(b.pos_err, a.pos_err, rtol=0, atol=1e-5)
    torch.testing.assert_close(b.q, a.q, rtol=0, atol=1e-4)


#: LM from 8 samples of the shipped model (no restarts) on random Panda goals, measured with float32 sampling, bf16
#: sampling and ATEN_CPU_CAPABILITY=avx2 (AMD EPYC, torch 2.13): 0 or 1 of 64 goals unsolved (3 goal sets); LM from
#: one sample fails for 36% to 41% of the 512 samples; 5 to 13 of 1024 goals unsolved (0.5% to 1.3%; 2 goal sets x 2
#: seeds). The bounds leave a margin of at least 2x on each side.
LM_FROM_8 = {"goals_solved_min": 0.90, "sample_fails": (0.15, 0.70), "goals_unsolved_of_1024": (0.002, 0.05)}


def test_lm_from_8_panda_samples_solves_most_goals_but_each_sample_often_fails():
    """Why tests/test_cuda_solve.py claims no more than the CPU's success for LM from 8 samples without restarts:
    nearly every goal is solved, but LM from a single sample fails for over a third of them, so a goal's success
    rests on a few of its samples and another seed (or another CPU's rounding) can leave one unsolved. Shares over
    64 goals, not facts of one seed: they hold with float32 and bf16 sampling."""
    from ggik import GGIK, SolveConfig

    solver, panda = GGIK.pretrained(), Robot.from_name("panda")
    T = panda.fk(panda.sample_q(64, torch.Generator().manual_seed(0)))
    result = solver.solve(panda, T, SolveConfig(samples=8, refine="lm"), generator=torch.Generator().manual_seed(1))
    solved = result.success[:, 0].double().mean().item()
    sample_fails = (~result.success).double().mean().item()
    assert solved >= LM_FROM_8["goals_solved_min"], f"{solved:.1%} of the goals solved"
    low, high = LM_FROM_8["sample_fails"]
    assert low <= sample_fails <= high, f"LM from {sample_fails:.1%} of the samples failed"


@pytest.mark.slow
def test_lm_from_8_panda_samples_leaves_about_one_goal_in_a_hundred_unsolved():
    """The share of Panda goals LM from 8 samples leaves unsolved, over 1024 goals (about 10 s on one CPU thread)."""
    from ggik import GGIK, SolveConfig

    solver, panda = GGIK.pretrained(), Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1024, torch.Generator().manual_seed(0)))
    config = SolveConfig(samples=8, refine="lm", first_solution=True)  # a goal's success: its first solution
    unsolved = (~solver.solve(panda, T, config, generator=torch.Generator().manual_seed(1)).success[:, 0]).double()
    low, high = LM_FROM_8["goals_unsolved_of_1024"]
    assert low <= unsolved.mean().item() <= high, f"{unsolved.mean().item():.2%} of the goals unsolved"


@pytest.mark.slow
def test_the_real_inductor_compile_samples_as_the_eager_decoder_does():
    """torch.compile itself (inductor, a C++ compiler): one shape for every pass, and float32 samples that match the
    eager decoder's to float rounding (tiny untrained model, no bf16)."""
    model = GGIKModel(TINY).eval()
    want = _raw(model, 5, bf16=False, graphs_per_pass=16)
    got = _raw(model.compile_decoder(), 5, bf16=False, graphs_per_pass=16)
    assert model.decoder_compiled  # no fallback warning: it compiled
    torch.testing.assert_close(got.points, want.points, rtol=1e-4, atol=1e-5)
