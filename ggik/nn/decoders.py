"""Decoder stages of the GGIK model that are not plain EGNN layers.

* :class:`NodeDecoder`: a per-node decoder. The edge work of a problem (the partial encoder's message passing
  over the complete graph) is done once per goal; each sample then costs an MLP per node, whose output is
  three invariant coefficients along the anchors' base-frame axes (equivariant vectors), added to the
  partial encoder's position of the node. The work per sample is (S x N x hidden) instead of the EGNN
  decoder's (S x N x N x hidden).
* :class:`GaussNewtonFollow`: ``steps`` moves along the damped Gauss-Newton step of the known distances
  (:func:`ggik.nn.distance_geometry.gauss_newton_step`), each scaled per node by an invariant coefficient
  read from the node's features. The step is an input the network may follow or ignore; the coefficients
  start at ``init`` (1 = a plain Gauss-Newton step) and are trained end to end. With ``solver="jacobi"`` the step is
  :func:`ggik.nn.distance_geometry.block_jacobi_step` (a 3 x 3 solve per node instead of a (3M x 3M) one per sample).

* :class:`VolumeInputs`: what a decoder layer of a model that reads handedness (``ModelConfig.volume_inputs``) adds to
  its inputs: the residuals of the arm's signed link volumes (:mod:`ggik.graph.handedness`) into its messages, and a
  learned move along their gradient. It starts at exactly zero.

The first two keep the known anchors fixed (only ``movable`` nodes move) and are exactly E(3)-equivariant. With the
arm's link volumes (:class:`VolumeInputs`, and :class:`GaussNewtonFollow` with ``volumes``) a decoder is equivariant to
rotations and translations only: a mirror image of the problem is another arm's problem.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ggik.nn.distance_geometry import block_jacobi_step, gauss_newton_step, volume_residuals

__all__ = ["NodeDecoder", "GaussNewtonFollow", "VolumeInputs", "VOLUME_GAIN", "VOLUME_SCALE", "clamp_through"]

#: the handedness parts start at zero and are scaled by this: the volume weight of a Gauss-Newton move is VOLUME_GAIN x
#: its parameter [1/m^2], the outputs of :class:`VolumeInputs` VOLUME_GAIN x its linear maps. An optimiser moves each
#: weight by about its learning rate per step, so they move 10x as fast as the network's other parts: a fine-tuning at
#: v10's rates reaches a weight of about 1 (the DG projection's) in a few hundred steps, not thousands
VOLUME_GAIN = 10.0
#: [m^3] a decoder layer reads each link-volume residual r as tanh(r / VOLUME_SCALE): a mirrored link of any arm
#: (|r| = 2 |V| with |V| of 0.02-0.3 m^3 on the training arms) reads about +-1, a nearly right one linearly
VOLUME_SCALE = 0.01


def clamp_through(c: torch.Tensor) -> torch.Tensor:
    """``max(c, 0)`` in value, with the gradient of ``c`` itself (1, straight through the clamp) everywhere.

    The volume weights of :class:`GaussNewtonFollow` are clamped so: ``clamp_min(0)`` has zero gradient once its
    parameter is negative, and a weight an optimiser pushed below 0 then stayed at 0 for good; through this one it has
    the gradient the loss has at weight 0, and comes back when the loss asks for volumes. Its values are exactly
    those of ``clamp_min(0)`` (c + (0 - c) is 0 in floating point), so every model file samples as before; a softplus
    would have no weight of exactly 0, neither the start (the step exactly the distances-only one) nor a file's
    clamped weight."""
    return c + (c.clamp_min(0.0) - c).detach()


class NodeDecoder(nn.Module):
    """Positions from per-node features: x_i = x~_i + sum_f c_f(h_i) e_f, masked to the movable nodes.

    Args:
        dim: width D of the input features; hidden: MLP width; layers: hidden layers of the MLP (>= 1);
        frame_vectors: F, the number of equivariant vectors per graph (3 anchor-frame axes).
    Shapes: h (B, N, D), x_start (B, N, 3) [m], frame (B, F, 3), movable (B, N) bool -> (B, N, 3) [m].
    """

    def __init__(self, dim: int, hidden: int, layers: int, frame_vectors: int = 3, coord_gain: float = 1e-3) -> None:
        super().__init__()
        if layers < 1:
            raise ValueError(f"the node decoder needs at least one hidden layer, got {layers}")
        mods: list[nn.Module] = [nn.Linear(dim, hidden), nn.SiLU()]
        for _ in range(layers - 1):
            mods += [nn.Linear(hidden, hidden), nn.SiLU()]
        self.body = nn.Sequential(*mods)
        self.coef = nn.Linear(hidden, frame_vectors)
        nn.init.xavier_uniform_(self.coef.weight, gain=coord_gain)
        nn.init.zeros_(self.coef.bias)

    def forward(
        self, h: torch.Tensor, x_start: torch.Tensor, frame: torch.Tensor, movable: torch.Tensor
    ) -> torch.Tensor:
        dx = self.coef(self.body(h)) @ frame  # (B, N, F) @ (B, F, 3)
        return x_start + dx * movable[..., None].to(dx.dtype)


class GaussNewtonFollow(nn.Module):
    """``steps`` learned-length moves along the Gauss-Newton step of the known distances.

    Args:
        dim: feature width D; steps: number of moves T; init: initial coefficient (bias of the heads);
        damping, max_step: of :func:`gauss_newton_step`; solver: "full" (:func:`gauss_newton_step`) or "jacobi"
        (:func:`block_jacobi_step`).
        volumes: the "full" steps also take the arm's signed link volumes as residuals (``volumes`` of :meth:`step`),
            with a learned weight per move w_k = :data:`VOLUME_GAIN` max(0, c_k) [1/m^2] (c_k starts at 0: the step is
            exactly the distances-only one), its gradient passed straight through the clamp (:func:`clamp_through`).
    Shapes: h (B, N, D), x (B, N, 3) [m], known_distances and known_mask (B, N, N), movable (B, N) -> (B, N, 3).
    """

    STEPS: dict[str, Callable[..., torch.Tensor]] = {"full": gauss_newton_step, "jacobi": block_jacobi_step}
    #: the same steps kept out of torch.compile's graphs (a graph break around each), used while torch.compile traces a
    #: step with gradients; made on the first such trace (:meth:`uncompiled_steps`). Traced whole into a model's graph,
    #: inductor's backward of the step was wrong (gradients 10^3 x too large; the eager and aot_eager backends and the
    #: forward were right), and compiled training blew up within 50 steps (tests/test_compiled_training.py). Sampling,
    #: without gradients, keeps them compiled; eager passes call :data:`STEPS`.
    UNCOMPILED_STEPS: dict[str, Callable[..., torch.Tensor]] = {}

    def __init__(
        self,
        dim: int,
        steps: int,
        init: float = 1.0,
        damping: float = 1e-2,
        max_step: float = 0.25,
        solver: str = "full",
        volumes: bool = False,
    ) -> None:
        super().__init__()
        if solver not in self.STEPS:
            raise ValueError(f"solver must be one of {tuple(self.STEPS)}, got {solver!r}")
        if volumes and solver != "full":
            raise ValueError("the Gauss-Newton moves take the link volumes with solver='full' only")
        self.damping, self.max_step, self.solver = damping, max_step, solver
        #: (T,) the weight of the volume residuals in each move [1/m^2], or None
        self.volume_weight = nn.Parameter(torch.zeros(steps)) if volumes else None
        heads = [nn.Linear(dim, 1) for _ in range(steps)]
        for head in heads:
            nn.init.zeros_(head.weight)
            nn.init.constant_(head.bias, init)
        self.coef = nn.ModuleList(heads)

    @classmethod
    def uncompiled_steps(cls) -> dict[str, Callable[..., torch.Tensor]]:
        """:data:`UNCOMPILED_STEPS`, made on first use. ``torch.compiler.disable`` imports torch._dynamo: made where
        torch.compile traces (torch._dynamo is running), not when the class is defined, so that a process that loads a
        model and never compiles does not pay for it (0.6-1.0 s of ``ggik solve``: benchmarks/cli_startup)."""
        if not cls.UNCOMPILED_STEPS:
            cls.UNCOMPILED_STEPS.update({name: torch.compiler.disable(step) for name, step in cls.STEPS.items()})
        return cls.UNCOMPILED_STEPS

    def step(
        self,
        k: int,
        h: torch.Tensor,
        x: torch.Tensor,
        known_distances: torch.Tensor,
        known_mask: torch.Tensor,
        movable: torch.Tensor,
        volumes: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Move ``k`` of the sequence (so that decoders can interleave the moves with their own layers); ``volumes``
        (B, L) [m^3]: the arm's signed link volumes (0: not skew), used with ``volumes=True``."""
        traced_with_gradients = torch.compiler.is_compiling() and torch.is_grad_enabled()
        steps = self.uncompiled_steps() if traced_with_gradients else self.STEPS
        if self.volume_weight is not None and volumes is not None:
            w = VOLUME_GAIN * clamp_through(self.volume_weight[k]) * (volumes != 0).to(x.dtype)
            delta = steps["full"](
                x, known_distances, known_mask, movable, self.damping, self.max_step, volumes=(volumes, w)
            )
        else:
            delta = steps[self.solver](x, known_distances, known_mask, movable, self.damping, self.max_step)
        return x + self.coef[k](h).to(x.dtype) * delta

    def forward(
        self,
        h: torch.Tensor,
        x: torch.Tensor,
        known_distances: torch.Tensor,
        known_mask: torch.Tensor,
        movable: torch.Tensor,
        volumes: torch.Tensor | None = None,
    ) -> torch.Tensor:
        for k in range(len(self.coef)):
            x = self.step(k, h, x, known_distances, known_mask, movable, volumes)
        return x


class VolumeInputs(nn.Module):
    """What one decoder layer of a model that reads handedness adds to its inputs (``extra`` of
    :meth:`ggik.nn.egnn.EGNNLayer.forward`).

    From the current positions and the arm's signed link volumes (:func:`ggik.nn.distance_geometry.volume_residuals`):
    a linear map of each node's two link-volume residuals r [m^3], read as tanh(r / :data:`VOLUME_SCALE`), into the
    message MLP's first layer of its incoming edges, and a move ``v(h_i) g_i / (|g_i| + 1)`` along the gradient g_i
    of 1/2 sum_l r_l^2 (``v`` invariant, linear in h; the gradient is cubic in the positions, so its length is squashed
    as the EGNN's differences are, and a move is at most |v| [m]). Both maps start at exactly zero, so a model with
    these parts samples as it did without them until trained.

    Args: dim: feature width D; hidden: width of the layer's message MLP.
    Shapes: h (B, N, D), x (B, N, 3) [m], volumes (B, L) [m^3] -> ((B, N, hidden), (B, N, 3)).
    """

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.message = nn.Linear(2, hidden, bias=False)
        self.coef = nn.Linear(dim, 1, bias=False)
        nn.init.zeros_(self.message.weight)
        nn.init.zeros_(self.coef.weight)

    def forward(self, h: torch.Tensor, x: torch.Tensor, volumes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        residual, grad = volume_residuals(x, volumes.to(x.dtype))
        grad = grad / (torch.linalg.vector_norm(grad, dim=-1, keepdim=True) + 1.0)
        message = VOLUME_GAIN * self.message(torch.tanh(residual / VOLUME_SCALE).to(h.dtype))
        return message, VOLUME_GAIN * self.coef(h).to(x.dtype) * grad
