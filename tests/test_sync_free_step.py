"""A training step of the paper's architecture takes the path of a GPU's on a CPU (``Trainer(sync_free=True)``), and on
that path it never waits for its device and has the same shapes every step.

A GPU runs ahead of the host only while the host never needs a result: ``.item()``, ``bool()``, ``int()`` or ``float()``
of a tensor, an op whose output shape depends on the data (``nonzero``, a boolean mask as an index, ``unique``, ...), a
tensor made from Python data on the device (``torch.tensor(list, device=...)``: a blocking copy from the host) or a
Python number written into one element of a device tensor (a blocking copy of a 0-d host tensor) each make the host
wait for every kernel queued before. :class:`HostSyncs` records them while a step runs on a CPU: the aten ops through a
``TorchDispatchMode`` (data, forward, backward, clipping and the optimiser's step all dispatch there), the Python-level
calls through a ``TorchFunctionMode``. One exception, stated where it is made: ``one_hot`` with a class count reads the
index's min and max on a CPU only (aten's ``Onehot.cpp`` leaves the check to the scatter's device asserts on CUDA).

What a CPU cannot show: whether a CUDA kernel syncs inside (the batched LU solve of the Gauss-Newton moves,
``linalg.solve_ex``, is the one candidate); ``benchmarks.training_speed.batch_sweep`` counts a CUDA step's syncs
(``torch.cuda.set_sync_debug_mode``).

Same shapes every step: the stacked sampler makes B examples of N = 2 n_max + 4 nodes every step, and two consecutive
steps dispatch the same aten ops on tensors of the same shapes, which is what a CUDA graph replays
(``torch.compile(mode="reduce-overhead")``)."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from ggik.data import TrainingData
from ggik.graph.batch import GraphBatch
from ggik.training.config import TrainConfig
from ggik.training.trainer import NonFiniteLoss, Trainer
from ggik.typed_config import from_dict, load_yaml, merge

REPO = Path(__file__).resolve().parents[1]
#: the paper's config (five arms, pose goals, q in [-pi, pi], volume inputs, canonical graphs, the stacked sampler) at
#: small widths and batch, so that a step takes a fraction of a second
SMALL = {
    "model": {"dim": 16, "hidden": 32, "enc_layers": 1, "dec_layers": 3},
    "data": {"batch_size": 16},
    "val": {"every": 0},
    "cpu_micro_batch": 32,  # the CPU path would split a step's batch; the sync-free path never does
}

#: aten ops that wait for the device or make a shape from the data, whatever their arguments
SYNC_OPS = {
    "_local_scalar_dense": ".item() / bool() / int() / float() of a tensor",
    "nonzero": "nonzero: a shape from the data",
    "masked_select": "masked_select: a shape from the data",
    "_unique": "unique: a shape from the data",
    "_unique2": "unique: a shape from the data",
    "unique_dim": "unique: a shape from the data",
    "unique_consecutive": "unique_consecutive: a shape from the data",
    "unique_dim_consecutive": "unique_consecutive: a shape from the data",
    "bincount": "bincount: a shape from the data",
    "equal": "torch.equal: a bool on the host",
    "is_nonzero": "bool() of a tensor",
    "_linalg_check_errors": "a linalg error check (the non-_ex form): reads info on the host",
}
#: aten ops that do when an index is a boolean mask (a shape from the data)
INDEX_OPS = {"index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index", "_unsafe_index_put"}
#: Python-level tensor methods that read a tensor on the host
HOST_READS = {
    "item": ".item()",
    "tolist": ".tolist()",
    "numpy": ".numpy()",
    "cpu": ".cpu()",
    "__bool__": "bool() of a tensor",
    "__int__": "int() of a tensor",
    "__float__": "float() of a tensor",
    "__index__": "a tensor used as a Python index",
}
FROM_DATA = "a tensor from Python data: on a GPU a blocking copy from the host"
ELEMENT = "a number written into one element: on a GPU a blocking copy from the host"


def _where() -> str:
    """The innermost frames of ggik (or of a plant below) on the stack: where the op came from."""
    frames = [f for f in traceback.extract_stack() if "/ggik/" in f.filename or f.name.startswith("plant_")]
    return " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(frames[-3:])) or "?"


class HostSyncs:
    """While entered, records what would make a GPU step wait for its device (module docstring): ``found`` lists
    (what, where) in order; ``trace`` every aten op as (name, shapes of its tensor arguments), to compare steps."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []
        self.trace: list[tuple[str, tuple]] = []
        self.exempt = 0  # > 0 inside a call whose host reads happen on a CPU only
        self.probing = 0  # > 0 while the recorder itself looks at a tensor
        recorder = self

        class Dispatch(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if not recorder.probing:
                    recorder.dispatched(func, args, kwargs)
                return func(*args, **kwargs)

        class Functions(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return recorder.called(func, args, kwargs or {})

        self._modes = (Dispatch(), Functions())

    def __enter__(self) -> HostSyncs:
        for mode in self._modes:
            mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        for mode in reversed(self._modes):
            mode.__exit__(*exc)

    def dispatched(self, func, args, kwargs) -> None:
        name = func.overloadpacket.__name__
        indices = [t for a in args if isinstance(a, (list, tuple)) for t in a if isinstance(t, torch.Tensor)]
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)] + indices
        self.trace.append((str(func), tuple((tuple(t.shape), t.dtype) for t in tensors)))
        if self.exempt:
            return
        if name in SYNC_OPS:
            self.found.append((SYNC_OPS[name], _where()))
        elif name in INDEX_OPS and any(t.dtype in (torch.bool, torch.uint8) for t in indices):
            self.found.append((f"{name} by a boolean mask: a shape from the data", _where()))
        elif func is torch.ops.aten.repeat_interleave.Tensor and kwargs.get("output_size") is None:
            self.found.append(("repeat_interleave by a tensor without output_size: a shape from the data", _where()))

    def called(self, func, args, kwargs):
        name = getattr(func, "__name__", "")
        if name in HOST_READS and getattr(func, "__qualname__", "").startswith("TensorBase."):
            self.found.append((HOST_READS[name], _where()))
        elif func in (torch.tensor, torch.as_tensor, torch.asarray, torch.Tensor.new_tensor) and not isinstance(
            args[1] if func is torch.Tensor.new_tensor else args[0], torch.Tensor
        ):
            self.found.append((FROM_DATA, _where()))
        elif func is torch.Tensor.__setitem__ and isinstance(args[2], (bool, int, float)):
            self.probing += 1
            try:
                element = args[0][args[1]].dim() == 0  # a 0-d destination is copied to, a larger one filled
            finally:
                self.probing -= 1
            if element:
                self.found.append((ELEMENT, _where()))
        elif func is torch.nn.functional.one_hot and (args[1] if len(args) > 1 else kwargs.get("num_classes", -1)) > 0:
            self.exempt += 1  # its min/max checks run on a CPU only (aten Onehot.cpp); on CUDA the scatter asserts
            try:
                return func(*args, **kwargs)
            finally:
                self.exempt -= 1
        return func(*args, **kwargs)


def small_config(**overrides) -> TrainConfig:
    return from_dict(TrainConfig, merge(merge(load_yaml(REPO / "train/configs/paper.yaml"), SMALL), overrides))


def model_inputs(batch: GraphBatch) -> dict[str, tuple[tuple[int, ...], torch.dtype] | None]:
    return {n: None if t is None else (tuple(t.shape), t.dtype) for n, t in vars(batch).items()}


def test_a_sync_free_step_never_waits_and_repeats_its_shapes(tmp_path):
    """Data, forward, backward, clipping and AdamW of the paper's architecture (volume inputs, canonical graphs, the
    stacked sampler) on the sync-free path: nothing that waits for the device, in a step after the first (which builds
    the stack of the five arms once and AdamW's state) and the next; the two steps dispatch the same aten ops on the
    same shapes, and the model's inputs are B x N every step."""
    cfg = small_config()
    assert cfg.model.volume_inputs and cfg.model.graph == "canonical" and cfg.data.sampler == "stacked"
    assert cfg.model.gn_steps > 0 and cfg.model.gn_solver == "full"
    trainer = Trainer(cfg, tmp_path, progress=False, sync_free=True)
    trainer._train_step_tensors()  # builds the stack and AdamW's state, once per run
    steps = []
    for _ in range(2):
        with HostSyncs() as syncs:
            stats = trainer._train_step_tensors()
        steps.append(syncs)
        assert not syncs.found, "host syncs in a sync-free step:\n" + "\n".join(f"{w}: {a}" for w, a in syncs.found)
    assert all(torch.isfinite(v) for v in stats.values())
    assert steps[0].trace == steps[1].trace, "two steps dispatched different ops or shapes"
    assert len(steps[0].trace) > 1000  # the whole step was seen: data, forward, backward, AdamW
    names = {n.split(".")[1] for n, _ in steps[0].trace}  # aten.NAME.OVERLOAD
    assert {"_linalg_solve_ex", "_fused_adamw_", "silu_backward", "searchsorted"} <= names
    data = TrainingData(cfg.data, cfg.model.graph)
    n_max = data.stack().n_max
    shapes = [model_inputs(data.examples(s)) for s in (3, 4)]
    assert shapes[0] == shapes[1]
    assert shapes[0]["known_distances"] == ((16, 2 * n_max + 4, 2 * n_max + 4), torch.float64)


def test_the_sync_free_step_is_the_cpu_step(tmp_path):
    """One step of each path from the same weights, data and noise (float32, one pass): the same loss, gradients and
    weights after AdamW to float32 rounding (the sync-free step solves the Gauss-Newton moves in all columns and takes
    a fused AdamW step: gradients 4e-5 of their norm apart, weights 7e-8 on this machine)."""
    results = []
    for sync_free in (False, True):
        cfg = small_config(cpu_micro_batch=0, bf16=False)
        trainer = Trainer(cfg, tmp_path / str(sync_free), progress=False, sync_free=sync_free)
        torch.manual_seed(5)  # the model's noise
        loss = float(trainer._train_step_tensors()["loss"])
        params = list(trainer.model.parameters())
        results.append((loss, torch.cat([p.grad.flatten() for p in params]), torch.cat([p.flatten() for p in params])))
    (loss, grads, weights), (loss_free, grads_free, weights_free) = results
    assert loss_free == pytest.approx(loss, rel=1e-5)
    assert (grads_free - grads).norm() <= 1e-3 * grads.norm()
    # AdamW's first step moves a weight by about lr * sign(gradient): compared where the two gradients agree to 10 %
    # (a gradient at rounding level may take either sign)
    same_sign = (grads_free - grads).abs() <= 0.1 * grads.abs()
    assert same_sign.float().mean() > 0.9
    assert torch.allclose(weights_free.detach()[same_sign], weights.detach()[same_sign], rtol=0, atol=1e-6)


def _nan_at_step_1(trainer: Trainer) -> None:
    forward = trainer.model.forward

    def broken(*args, **kwargs):
        out = forward(*args, **kwargs)
        return {**out, "kl": out["kl"] * float("nan")} if trainer.step == 1 else out

    trainer.model.forward = broken


def test_a_non_finite_loss_is_raised_at_the_next_check_and_leaves_no_checkpoint(tmp_path):
    """Sync-free, a step with a non-finite loss is taken (no host read) and the next check raises, naming it; a run
    then ends without writing last.pt (the weights are not finite). The CPU path raises in the step itself."""
    trainer = Trainer(small_config(), tmp_path / "free", progress=False, sync_free=True)
    _nan_at_step_1(trainer)
    for _ in range(3):
        stats = trainer._train_step_tensors()
    with pytest.raises(NonFiniteLoss, match="non-finite loss at step 1 "):
        trainer._check_finite(stats)
    cfg = small_config(steps=4, log_every=2, checkpoint_every=1000)
    run = Trainer(cfg, tmp_path / "run", progress=False, sync_free=True)
    _nan_at_step_1(run)
    with pytest.raises(NonFiniteLoss, match="non-finite loss at step 1 "):
        run.train()
    assert run.step == 2 and not (tmp_path / "run" / "last.pt").exists()
    cpu = Trainer(small_config(), tmp_path / "cpu", progress=False, sync_free=False)
    _nan_at_step_1(cpu)
    cpu._train_step_tensors()
    with pytest.raises(NonFiniteLoss, match="non-finite loss at step 1 "):
        cpu._train_step_tensors()


def plant_item(x: torch.Tensor, repeats: torch.Tensor) -> None:
    x.sum().item()


def plant_mask(x: torch.Tensor, repeats: torch.Tensor) -> None:
    x[x > 0] = 0.0


def plant_mask_read(x: torch.Tensor, repeats: torch.Tensor) -> None:
    x[x > 0].sum()


def plant_nonzero(x: torch.Tensor, repeats: torch.Tensor) -> None:
    (x > 0).nonzero()


def plant_unique(x: torch.Tensor, repeats: torch.Tensor) -> None:
    torch.unique(x)


def plant_repeat(x: torch.Tensor, repeats: torch.Tensor) -> None:
    x.repeat_interleave(repeats, dim=1)


def plant_equal(x: torch.Tensor, repeats: torch.Tensor) -> None:
    torch.equal(x, x)


def plant_bool(x: torch.Tensor, repeats: torch.Tensor) -> None:
    bool((x > 0).any())


def plant_tensor(x: torch.Tensor, repeats: torch.Tensor) -> None:
    torch.tensor([1.0, 2.0], device=x.device)


def plant_element(x: torch.Tensor, repeats: torch.Tensor) -> None:
    x[0, 0] = 1.0


def plant_tolist(x: torch.Tensor, repeats: torch.Tensor) -> None:
    x.tolist()


def plant_one_hot(x: torch.Tensor, repeats: torch.Tensor) -> None:
    torch.nn.functional.one_hot(repeats)  # the class count read from the data: a sync on CUDA too


@pytest.mark.parametrize(
    "plant, what",
    [
        (plant_item, ".item()"),
        (plant_mask, "index_put_ by a boolean mask"),
        (plant_mask_read, "index by a boolean mask"),
        (plant_nonzero, "nonzero"),
        (plant_unique, "unique"),
        (plant_repeat, "repeat_interleave by a tensor"),
        (plant_equal, "torch.equal"),
        (plant_bool, "bool() of a tensor"),
        (plant_tensor, FROM_DATA),
        (plant_element, ELEMENT),
        (plant_tolist, ".tolist()"),
        (plant_one_hot, ".item() / bool()"),
    ],
)
def test_the_recorder_sees_each_kind_of_sync(plant, what):
    x = torch.randn(4, 3)
    repeats = torch.ones(3, dtype=torch.long)
    with HostSyncs() as syncs:
        plant(x, repeats)
    assert any(found.startswith(what) and plant.__name__ in where for found, where in syncs.found), syncs.found


def test_the_recorder_passes_their_fixed_size_forms():
    """What the step uses instead: torch.where, masked_fill, long indices, a number written into a row of elements
    (a fill), one_hot with a class count, a 0-d tensor of the host as a scalar operand."""
    x, rows = torch.randn(4, 3), torch.tensor([0, 2])
    with HostSyncs() as syncs:
        torch.where(x > 0, x, 0.0)
        x.masked_fill(x > 0, 0.0)
        x[rows, rows[:, None] * 0 + 1] += 1.0
        x[..., 0] = 1.0
        torch.nn.functional.one_hot(rows, 3)
        x * torch.zeros(())
        x.repeat_interleave(rows[:1].expand(3) + 2, dim=1, output_size=6)
    assert syncs.found == []
