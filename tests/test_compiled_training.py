"""A compiled training step (``compile=default``: torch.compile with inductor, a C++ compiler) computes the gradients
of the eager one.

It did not: with the decoder's Gauss-Newton moves traced whole into one graph (no graph break since they take all
columns under torch.compile), inductor's code for that graph's backward gave gradients 10^3 x too large (the eager and
aot_eager backends were right, the forward was right), and GPU runs of the shipped architecture blew up to a
non-finite loss within 50 steps. The moves now stay out of compiled graphs while gradients are taken
(:mod:`ggik.nn.decoders`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ggik.checkpoint import config_for_init
from ggik.training.config import TrainConfig
from ggik.training.objective import step_objective
from ggik.training.trainer import Trainer
from ggik.typed_config import from_dict, load_yaml, merge

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "ggik" / "weights" / "ggik_default.pt"


def _gradients(trainer: Trainer, net, batch) -> tuple[float, dict[str, torch.Tensor]]:
    """The step's loss and every parameter's gradient, the model's noise drawn from one seed."""
    model = trainer.model
    model.zero_grad(set_to_none=True)
    torch.manual_seed(123)
    out = net(batch, kl_samples=trainer.cfg.loss.kl_samples)
    loss = step_objective(out, trainer.step, trainer.cfg.loss)["loss"]
    loss.backward()
    return float(loss.detach()), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:`torch._prims_common.check` is deprecated:FutureWarning")  # torch's own lowering
@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning")  # dynamo's own
def test_a_compiled_training_step_has_the_eager_gradients(tmp_path, monkeypatch):
    import torch._inductor.config as inductor

    monkeypatch.setattr(inductor, "fallback_random", True)  # the compiled graph draws the eager noise
    data = merge(
        load_yaml(REPO / "train" / "configs" / "canonical.yaml"),
        {"data": {"batch_size": 128}, "val": {"every": 0}, "threads": 1, "compile": "eager"},
    )
    trainer = Trainer(from_dict(TrainConfig, config_for_init(SHIPPED, data)), tmp_path, progress=False)
    trainer.init_from(SHIPPED)
    trainer.model.train()
    batch = trainer.data.examples(0, 0, trainer.device).to(trainer.device, torch.float32)
    loss, want = _gradients(trainer, trainer.model, batch)
    compiled_loss, got = _gradients(trainer, torch.compile(trainer.model), batch)
    assert compiled_loss == pytest.approx(loss, rel=1e-4)
    assert got.keys() == want.keys()
    norm = torch.stack([g.norm() for g in want.values()]).norm()
    error = torch.stack([(got[n] - want[n]).norm() for n in want]).norm()
    assert error <= 1e-3 * norm, f"compiled gradients off by {float(error / norm):.3g} of their norm"
