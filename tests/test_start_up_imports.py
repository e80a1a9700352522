"""What a process that solves with a model imports: no torch._dynamo (0.6-1.0 s of ``ggik solve``'s start-up,
benchmarks/cli_startup). Only torch.compile loads it: the decoder's Gauss-Newton moves are kept out of compiled
graphs by ``torch.compiler.disable``, which imports it, so they are wrapped on the first trace
(:meth:`ggik.nn.decoders.GaussNewtonFollow.uncompiled_steps`), not when the class is defined."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMPILERS = ("torch._dynamo", "torch._inductor")


def test_loading_the_model_and_solving_import_no_compiler():
    code = (
        "import sys\nfrom ggik.cli import main\n"
        "status = main(['solve', '--robot', 'panda', '--pose', '0.4', '0.1', '0.5', '0', '1', '0', '0'])\n"
        f"loaded = [m for m in {COMPILERS!r} if m in sys.modules]\n"
        "assert not loaded, f'ggik solve imported {loaded}'\n"
        "sys.exit(status)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "distinct solutions" in run.stdout


def test_an_eager_training_pass_imports_no_compiler():
    """Gradients taken eagerly (``compile=eager``, the CPU default) call the moves themselves, not their wrapped
    copies."""
    code = (
        "import sys, torch\nfrom ggik import Robot, RobotGraph\nfrom ggik.graph.batch import GraphBatch\n"
        "from ggik.nn.cvae import GGIKModel, ModelConfig\n"
        "model = GGIKModel(ModelConfig(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=4, prior_components=2))\n"
        "graph = RobotGraph.from_robot(Robot.from_name('panda'))\n"
        "batch = GraphBatch.from_graph(graph, q=torch.zeros(2, 7, dtype=torch.float64)).to('cpu', torch.float32)\n"
        "out = model(batch)\n(out['free_se'].sum() + out['kl'].sum()).backward()\n"
        "assert model.gn_follow.coef[0].bias.grad.abs().sum() > 0\n"
        f"loaded = [m for m in {COMPILERS!r} if m in sys.modules]\n"
        "assert not loaded, f'a training pass imported {loaded}'\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
