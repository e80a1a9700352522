"""The GGIK conditional VAE: E(3)-equivariant graph encoders, a Gaussian-mixture prior, a graph decoder.

Given a partial graph G~ (the IK problem: anchor positions and known distances) the model samples
complete point sets; trained on complete graphs G (solutions) by maximising an ELBO:

* ``enc_partial``: EGNN over G~ -> per-node invariant embedding ``h~`` and a first equivariant guess
  of the positions ``x~``;
* ``enc_full``: EGNN over G (true positions) -> per-node embedding ``h`` (training only);
* ``posterior``: q(z | G, G~), per-node diagonal Gaussian from [h, h~];
* ``prior``: p(z | G~), a mixture of K diagonal Gaussians from h~; by default the mixture component
  is drawn per node as in the reference (``prior_mixture="node"``), or once per sample for all nodes
  (``"graph"``: a global solution mode, e.g. elbow up or down);
* ``decoder``: EGNN that starts at ``x~`` with features [z, h~, role] -> positions of all nodes.

Loss: ``anchor_gain * SE(anchors) + rec_gain * SE(free nodes) + beta * KL(q || p)``, squared errors
[m^2] summed over a graph's nodes, KL [nats] of the whole graph's latents (Monte-Carlo, the prior is a
mixture), both averaged over the batch. Optionally (``LossConfig.prior_gain``) ``+ prior_gain *
distance_se(decode(z ~ prior))``: a point set decoded from a prior sample must satisfy the problem's known
distances. That term needs no true solution; it trains the prior and decoder on exactly what sampling
uses, where the ELBO only reaches them through the posterior.

What the model gets as input, and why (and where it departs from the reference implementation of GGIK):

* **Node roles.** Type (base/joint/EE), kind (p/q/x/y), and the joint index counted from the base and from the end
  effector (one-hot, clipped): with type + goal only, 16 of 18 nodes have identical inputs (a prototype never left the
  "average arm" loss). Counting from both ends keeps the features meaningful for robots of other DOF.
* **Coordinates stay in R^3.** The reference lifts coordinates with an MLP, which breaks equivariance.
  Here every graph network is exactly E(3)-equivariant: anchors enter as coordinates, distances as
  edge attributes, the latent z as invariant features. The output rotates with the anchors.
* **No goal log(T) features by default** (``goal_features=False``). The goal position and approach axis are already
  the anchor positions p_n, q_n; the roll about the last axis is invisible in the point set (it is recovered from the
  goal by :meth:`RobotGraph.joint_angles`): the features would only break equivariance. With ``goal_features=True``
  they come from each example's own goal (the reference used the wrong frame for all but a file's first example).
* **The decoder sees the known distances and starts from the partial encoder's positions**, and the
  unknown nodes start on the segment from p0 to the goal (an equivariant, informed initial guess).
* **Anchor-frame coordinate updates** (``anchor_frame=True``): besides the EGNN's pairwise
  differences, each coordinate update may move a node along the three axes of the base frame spanned
  by the anchors (x - p0, p0 - y, q0 - p0), with invariant coefficients. This is still exactly
  E(3)-equivariant, and it makes "put node i at this place" a linear read-out instead of a
  multi-layer construction from pairwise differences.
* **Known anchors stay where they are** (``pin_anchors=True``): only the unknown nodes move in the
  partial encoder and the decoder, so the anchor term of the loss is zero by construction (it is
  still computed and logged, and matters with ``pin_anchors=False``).

Options of the decoder and the latent, measured against each other in the recipe study (see MODEL_CARD.md).
The defaults of :class:`ModelConfig` are the shipped model's: residual inputs and two Gauss-Newton moves, the
other options at the reference's choice. A checkpoint records its whole model config; a key that a file predates
reads as it was before the key existed (:data:`ggik.checkpoint.IMPLIED_CONFIG`: off), not as today's default.

* ``residual_inputs`` (on by default): every decoder layer sees the known-distance residuals of its current
  positions as edge inputs and may step along the distance cost's gradient (:class:`ggik.nn.EGNNLayer`).
* ``gn_steps`` > 0 (2 by default): the last decoder stages follow the damped Gauss-Newton step of the known distances
  with learned invariant coefficients (:class:`ggik.nn.decoders.GaussNewtonFollow`), interleaved with
  the last EGNN layers (or after the node decoder); ``gn_solver="jacobi"`` makes each move the cheap block-Jacobi
  step (:func:`ggik.nn.distance_geometry.block_jacobi_step`, a 3 x 3 solve per node) instead of the full system.
* ``latent_scope="graph"``: one latent of size Z per graph (a mixture prior of K components over it)
  instead of one per node; the decoder sees the same z at every node. Internally it is a latent "node"
  dimension of size L = 1, so the same code handles both.
* ``volume_inputs``: the model reads handedness, the arm's signed link volumes (:mod:`ggik.graph.handedness`), in every
  decoder layer (:class:`ggik.nn.decoders.VolumeInputs`) and Gauss-Newton move; each new part starts at zero. It is
  equivariant to rotations and translations, not to reflections: it can tell an arm from its mirror images.
* ``decoder="node"``: :class:`ggik.nn.decoders.NodeDecoder`, per-node work per sample (``dec_layers``
  hidden layers of width ``hidden``), the complete-graph work done once per problem.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict

import torch
from torch import nn

from ggik.errors import GraphError
from ggik.graph.batch import GraphBatch
from ggik.graph.robot_graph import RobotGraph
from ggik.kinematics.geometry import matrix_to_rotvec
from ggik.kinematics.robot import Robot
from ggik.nn import EGNN
from ggik.nn.compiled_decode import is_compile_error, padded_rows
from ggik.nn.decoders import GaussNewtonFollow, NodeDecoder, VolumeInputs
from ggik.nn.encoding import (
    MixturePrior,
    ProblemEncoding,
    anchor_frame,
    distance_se,
    edge_attr,
    initial_positions,
    latent_noise,
    mlp,
    normal_log_prob,
)
from ggik.nn.model_config import ModelConfig

__all__ = ["ModelConfig", "GGIKModel", "ProblemEncoding", "MixturePrior"]


class GGIKModel(nn.Module):
    """The GGIK CVAE. All tensors are dense and padded (:class:`GraphBatch`).

    Shapes: B problems, N nodes (padded), S samples, Z = ``cfg.latent``, K = ``cfg.prior_components``.
    """

    def __init__(self, cfg: ModelConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg = cfg or ModelConfig()
        cfg.check()
        D, H, Z, K = cfg.dim, cfg.hidden, cfg.latent, cfg.prior_components
        self.embed = nn.Linear(cfg.node_features, D)
        F = 3 if cfg.anchor_frame else 0
        self.enc_partial = EGNN(D, H, 2, cfg.enc_layers, cfg.coord_gain, frame_vectors=F)
        self.enc_full = EGNN(D, H, 2, cfg.enc_layers, cfg.coord_gain, outputs="features")  # only h is used
        self.posterior = mlp(2 * D, H, 2 * Z)
        self.prior = mlp(D, H, K * (1 + 2 * Z))
        Dd, Hd = cfg.dec_dim or D, cfg.dec_hidden or H  # the decoder's own widths (a distilled student's are smaller)
        self.dec_in = nn.Linear(Z + 2 * D, Dd)
        self.decoder: EGNN | NodeDecoder
        if cfg.decoder == "egnn":  # only x is used
            self.decoder = EGNN(
                Dd,
                Hd,
                2,
                cfg.dec_layers,
                cfg.coord_gain,
                outputs="coords",
                frame_vectors=F,
                residual_inputs=cfg.residual_inputs,
            )
        else:
            self.decoder = NodeDecoder(Dd, Hd, cfg.dec_layers, F, cfg.coord_gain)
        self.gn_follow = (
            GaussNewtonFollow(
                Dd, cfg.gn_steps, cfg.gn_init, cfg.gn_damping, solver=cfg.gn_solver, volumes=cfg.volume_inputs
            )
            if cfg.gn_steps
            else None
        )
        #: per decoder layer, its link-volume inputs (``volume_inputs`` with the EGNN decoder), else None
        self.dec_volumes = (
            nn.ModuleList(VolumeInputs(Dd, Hd) for _ in range(cfg.dec_layers))
            if cfg.volume_inputs and cfg.decoder == "egnn"
            else None
        )
        #: set by compile_decoder: what sample() decodes with
        self._compiled_decode: Callable[[torch.Tensor, ProblemEncoding, torch.Tensor], torch.Tensor] | None = None

    def compile_decoder(self, enabled: bool = True) -> GGIKModel:
        """Sample through ``torch.compile(self.decode)`` (inductor: the EGNN layers' element-wise work fused), or
        eagerly again (``enabled=False``). Passes are padded to a few shapes (:mod:`ggik.nn.compiled_decode`), each
        compiled once (seconds; a C++ compiler is needed on a CPU). Where compiling fails (torch._dynamo or inductor
        raise, on an input the eager decoder takes), the model warns once with the cause and samples eagerly from then
        on; any other error propagates, the decoder still compiled. ``forward`` never uses it. Returns self."""
        self._compiled_decode = torch.compile(self.decode, dynamic=False) if enabled else None
        return self

    @property
    def decoder_compiled(self) -> bool:
        """Whether :meth:`sample` decodes through ``torch.compile`` (:meth:`compile_decoder`)."""
        return self._compiled_decode is not None

    def _sampling_decode(
        self, z: torch.Tensor, problem: ProblemEncoding, node_mask: torch.Tensor, pad_to: int | None
    ) -> torch.Tensor:
        """:meth:`decode`, compiled where :meth:`compile_decoder` asked; compiled, the G rows are first padded to
        ``padded_rows(G, pad_to)`` (the last row repeated, the result cut back to G): passes of any number of goals
        take a few shapes and compile a few times only."""
        compiled = self._compiled_decode
        if compiled is None:
            return self.decode(z, problem, node_mask)
        G = z.shape[0]
        rows = torch.arange(padded_rows(G, pad_to), device=z.device).clamp(max=G - 1)
        args = (z, problem, node_mask) if rows.shape[0] == G else (z[rows], problem.rows(rows), node_mask[rows])
        try:
            with warnings.catch_warnings():  # torch's own lowering warns of its internals; nothing to act on
                warnings.filterwarnings("ignore", message=r".*_prims_common\.check", category=FutureWarning)
                return compiled(*args)[:G]
        except Exception as exc:
            if not is_compile_error(exc):
                raise  # a bad input, out of memory, ...: the caller's to see; the decoder stays compiled
            x = self.decode(z, problem, node_mask)  # raises where the input, not the compile, is at fault
            cause = f"{type(exc).__name__}: {exc}"
            warnings.warn(f"torch.compile of the decoder failed, sampling eagerly from now on: {cause}", stacklevel=3)
            self._compiled_decode = None
            return x

    # ------------------------------------------------------------------ graphs and inputs
    def graph(self, robot: Robot) -> RobotGraph:
        """The graph of ``robot`` in the convention this model was trained on (``cfg.graph``)."""
        return RobotGraph.from_robot(robot, self.cfg.graph)

    def check_graph(self, graph: RobotGraph) -> RobotGraph:
        """``graph`` if it is in this model's convention; :class:`GraphError` otherwise (the model would read another
        problem than the one posed: samples off by centimetres to metres, with no error)."""
        if graph.convention != self.cfg.graph:
            raise GraphError(
                f"{graph.robot.name}: the graph is in the {graph.convention!r} convention, but this model was trained "
                f"on {self.cfg.graph!r} graphs; build it with model.graph(robot) (RobotGraph.from_robot(robot, "
                f"convention={self.cfg.graph!r}))"
            )
        return graph

    def node_features(self, batch: GraphBatch) -> torch.Tensor:
        """Invariant node inputs (B, N, F): type, kind, index from base / from EE, anchor flag [, goal]."""
        c = self.cfg
        dtype = batch.known_positions.dtype
        from_base = batch.node_frame.clamp(max=c.max_index)
        from_end = (batch.num_joints[:, None] - batch.node_frame).clamp(min=0, max=c.max_index)
        parts = [
            nn.functional.one_hot(batch.node_type, 3),
            nn.functional.one_hot(batch.node_kind, 4),
            nn.functional.one_hot(from_base, c.max_index + 1),
            nn.functional.one_hot(from_end, c.max_index + 1),
            batch.anchor_mask[..., None],
        ]
        feats = torch.cat([p.to(dtype) for p in parts], -1)
        if c.goal_features:
            goal = torch.cat([batch.goal[:, :3, 3], matrix_to_rotvec(batch.goal[:, :3, :3])], -1)
            feats = torch.cat([feats, goal[:, None, :].expand(-1, feats.shape[1], -1)], -1)
        return feats * batch.node_mask[..., None].to(dtype)

    initial_positions = staticmethod(initial_positions)
    anchor_frame = staticmethod(anchor_frame)
    edge_attr = staticmethod(edge_attr)

    # ------------------------------------------------------------------ networks
    def encode_problem(self, batch: GraphBatch) -> ProblemEncoding:
        """Everything that depends on the problem only (:class:`ProblemEncoding`): h0, h~, x~, edge attrs, prior."""
        h0 = self.embed(self.node_features(batch))
        ea = self.edge_attr(batch)
        if self.cfg.prior_mixture not in ("graph", "node"):
            raise ValueError(f"prior_mixture must be 'graph' or 'node', got {self.cfg.prior_mixture!r}")
        movable = batch.node_mask & ~batch.anchor_mask if self.cfg.pin_anchors else batch.node_mask
        frame = self.anchor_frame(batch)
        h_p, x_p = self.enc_partial(
            h0, self.initial_positions(batch), ea, batch.node_mask, movable, frame if self.cfg.anchor_frame else None
        )
        K, Z = self.cfg.prior_components, self.cfg.latent
        raw = self.prior(self._to_latent_nodes(h_p, batch.node_mask))
        raw = raw.view(*raw.shape[:2], K, 1 + 2 * Z)
        prior = MixturePrior(
            logits=self._mixture_logits(raw[..., 0], self.latent_mask(batch.node_mask)),  # (B, L, K) or (B, K)
            mu=raw[..., 1 : 1 + Z],  # (B, L, K, Z)
            log_std=raw[..., 1 + Z :].clamp(self.cfg.min_log_std, self.cfg.max_log_std),
        )
        volumes = batch.link_volumes().to(h0.dtype) if self.cfg.volume_inputs else None
        parts = dict(h0=h0, h_partial=h_p, x_partial=x_p, edge_attr=ea, movable=movable, frame=frame)
        return ProblemEncoding(**parts, prior=prior, volumes=volumes)

    def latent_mask(self, node_mask: torch.Tensor) -> torch.Tensor:
        """(B, L) bool: the real latent nodes, the nodes themselves (per-node latents) or one per graph."""
        if self.cfg.latent_scope == "node":
            return node_mask
        return torch.ones_like(node_mask[:, :1])

    def _to_latent_nodes(self, h: torch.Tensor, node_mask: torch.Tensor) -> torch.Tensor:
        """(B, N, C) node features -> (B, L, C): unchanged, or their mean over the real nodes (graph latent)."""
        if self.cfg.latent_scope == "node":
            return h
        m = node_mask[..., None].to(h.dtype)
        return (h * m).sum(1, keepdim=True) / m.sum(1, keepdim=True).clamp(min=1.0)

    def decode(self, z: torch.Tensor, problem: ProblemEncoding, node_mask: torch.Tensor) -> torch.Tensor:
        """Positions (B, N, 3) from latents z (B, L, Z) and the problem encoding."""
        if self.cfg.latent_scope == "graph":  # one latent per graph, the same at every node
            z = z.expand(-1, node_mask.shape[1], -1)
        h = self.dec_in(torch.cat([z, problem.h_partial, problem.h0], -1))
        frame = problem.frame if self.cfg.anchor_frame else None
        x = problem.x_partial
        dist, known = problem.edge_attr[..., 0], problem.edge_attr[..., 1]
        decoder, gn = self.decoder, self.gn_follow
        volumes = problem.volumes
        if isinstance(decoder, NodeDecoder):
            x = decoder(h, x, frame, problem.movable)
            return x if gn is None else gn(h, x, dist, known, problem.movable, volumes)
        layers = decoder.layers
        first_gn = len(layers) - (len(gn.coef) if gn is not None else 0)
        for k, layer in enumerate(layers):  # the Gauss-Newton moves come before each of the last gn_steps layers
            if gn is not None and k >= first_gn:
                x = gn.step(k - first_gn, h, x, dist, known, problem.movable, volumes)
            extra = None if self.dec_volumes is None or volumes is None else self.dec_volumes[k](h, x, volumes)
            h, x = layer(h, x, problem.edge_attr, node_mask, problem.movable, frame, extra)
        return x

    def _mixture_logits(self, node_logits: torch.Tensor, node_mask: torch.Tensor) -> torch.Tensor:
        if self.cfg.prior_mixture == "node":
            return node_logits
        m = node_mask[..., None].to(node_logits.dtype)
        return (node_logits * m).sum(1) / m.sum(1).clamp(min=1.0)  # (B, K): mean over real nodes

    def prior_log_prob(self, z: torch.Tensor, problem: ProblemEncoding, node_mask: torch.Tensor) -> torch.Tensor:
        """log p(z | G~) of whole graphs, z (..., B, L, Z) -> (..., B); ``node_mask`` (B, L) marks the real latent
        nodes.

        "node" mixture: each node is an independent mixture, log p = sum_n logsumexp_k(...).
        "graph" mixture: one component k for all nodes of a sample (a global solution mode, e.g. elbow up
        or down), log p = logsumexp_k(log pi_k + sum_n log N(z_n; mu_nk, sigma_nk)).
        """
        prior = _prior_of(problem)
        logp = normal_log_prob(z[..., None, :], prior.mu, prior.log_std)  # (..., B, N, K)
        mask = node_mask[..., None].to(logp.dtype)
        log_pi = torch.log_softmax(prior.logits, -1)
        if self.cfg.prior_mixture == "node":
            return (torch.logsumexp(log_pi + logp, -1) * node_mask.to(logp.dtype)).sum(-1)
        return torch.logsumexp(log_pi + (logp * mask).sum(-2), -1)

    def forward(self, batch: GraphBatch, kl_samples: int = 1, prior_samples: bool = False) -> dict[str, torch.Tensor]:
        """Training pass on solved examples (``batch.pos`` set). Returns the decoded positions and loss terms.

        Returns a dict: ``x`` (B, N, 3) decoded from a posterior sample; per-example ``anchor_se``,
        ``free_se`` [m^2] and ``kl`` [nats] (B,). With ``prior_samples``, also ``prior_dist_se`` (B,) [m^2]:
        the known-distance error (:meth:`distance_se`) of one point set decoded from a *prior* sample
        (reparameterised, so it trains the prior and the decoder; no true solution is needed for it).
        """
        if batch.pos is None:
            raise ValueError("GGIKModel.forward needs solved examples (batch.pos); use sample() for problems")
        problem = self.encode_problem(batch)
        h_full, _ = self.enc_full(problem.h0, batch.pos, problem.edge_attr, batch.node_mask)
        raw = self.posterior(self._to_latent_nodes(torch.cat([h_full, problem.h_partial], -1), batch.node_mask))
        Z = self.cfg.latent
        mu, log_std = raw[..., :Z], raw[..., Z:].clamp(self.cfg.min_log_std, self.cfg.max_log_std)
        eps = torch.randn((max(kl_samples, 1),) + mu.shape, dtype=mu.dtype, device=mu.device)
        zs = mu + torch.exp(log_std) * eps  # (kl_samples, B, L, Z)
        x = self.decode(zs[0], problem, batch.node_mask)

        mask = batch.node_mask.to(x.dtype)
        lat_mask = self.latent_mask(batch.node_mask)
        log_q = (normal_log_prob(zs, mu, log_std) * lat_mask.to(x.dtype)).sum(-1)  # (kl_samples, B)
        kl = (log_q - self.prior_log_prob(zs, problem, lat_mask)).mean(0)
        se = ((x - batch.pos) ** 2).sum(-1) * mask
        anchors = batch.anchor_mask.to(x.dtype)
        out = dict(
            x=x,
            anchor_se=(se * anchors).sum(-1),
            free_se=(se * (1 - anchors)).sum(-1),
            kl=kl,
        )
        if prior_samples:
            B, L = lat_mask.shape
            u = torch.rand((B, 1, L), dtype=mu.dtype, device=mu.device)
            z = self.prior_latents(problem, u, torch.randn_like(mu)[:, None])[:, 0]
            out["prior_dist_se"] = self.distance_se(self.decode(z, problem, batch.node_mask), batch)
        return out

    distance_se = staticmethod(distance_se)

    def prior_latents(self, problem: ProblemEncoding, u: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """Prior latents (B, S, L, Z) from uniforms u (B, S, L) (mixture component) and normals eps (B, S, L, Z).

        With the "graph" mixture the component of a sample is drawn with ``u[b, s, 0]``. Differentiable in
        the prior's means and scales (reparameterisation); the component choice is not.
        """
        B, S, N = u.shape
        Z, prior = self.cfg.latent, _prior_of(problem)
        if self.cfg.prior_mixture == "node":
            cdf = torch.cumsum(torch.softmax(prior.logits, -1), -1)[:, None, :, :]  # (B, 1, N, K)
        else:  # one component per sample, drawn with the uniform of its first node
            cdf = torch.cumsum(torch.softmax(prior.logits, -1), -1)[:, None, None, :]  # (B, 1, 1, K)
            u = u[..., :1].expand(B, S, N)
        comp = (u[..., None] > cdf).sum(-1).clamp(max=self.cfg.prior_components - 1)  # (B, S, N)
        mu = prior.mu[:, None].expand(B, S, N, -1, -1)
        ls = prior.log_std[:, None].expand(B, S, N, -1, -1)
        idx = comp[..., None, None].expand(B, S, N, 1, Z)
        return torch.gather(mu, 3, idx)[..., 0, :] + torch.exp(torch.gather(ls, 3, idx)[..., 0, :]) * eps

    @torch.no_grad()
    def sample(
        self,
        batch: GraphBatch,
        num_samples: int,
        generator: torch.Generator | None = None,
        noise: dict[str, torch.Tensor] | None = None,
        pad_to: int | None = None,
    ) -> torch.Tensor:
        """``num_samples`` point sets per problem from the prior: (B, S, N, 3) in each graph frame [m].

        All B x S decodings run as one batch. The randomness is drawn per problem in a fixed layout,
        ``noise = {"u": (B, S, L), "eps": (B, S, L, Z)}`` (uniform for the mixture component, standard
        normal for the Gaussian; L = N latent nodes, or 1 with ``latent_scope="graph"``; with the "graph"
        mixture the component of a sample is drawn with ``u[b, s, 0]``), so problem b's samples depend only on its
        own slice: sampling problems jointly equals sampling each alone with the same noise. Pass ``noise`` to
        control it (moved to the model's device), or a ``generator`` to draw it on the generator's device (a CPU
        generator with a CUDA model: the CPU's draws, so both devices sample the same latents); the noise is in the
        parameters' dtype (float32 under bf16 autocast too). ``pad_to``: with a compiled decoder
        (:meth:`compile_decoder`), the most graphs a pass is padded to (the size of a full pass;
        :func:`ggik.nn.compiled_decode.padded_rows`); the noise and results are those of the B problems alone.
        """
        B, N = batch.node_mask.shape
        L = self.latent_mask(batch.node_mask).shape[1]
        S, Z = int(num_samples), self.cfg.latent
        if S < 1:
            raise ValueError(f"num_samples must be >= 1, got {num_samples}")
        problem = self.encode_problem(batch)
        dtype, device = self.embed.weight.dtype, problem.h0.device  # the parameters' dtype, under autocast too
        if noise is None:  # drawn where the generator lives (a CPU generator gives the same draws on every device)
            noise = latent_noise((B, S, L), Z, generator, dtype, device)
        u, eps = noise["u"].to(device, dtype), noise["eps"].to(device, dtype)
        if u.shape != (B, S, L) or eps.shape != (B, S, L, Z):
            got = f"{tuple(u.shape)}, {tuple(eps.shape)}"
            raise ValueError(f"noise must have u {(B, S, L)} and eps {(B, S, L, Z)}, got {got}")
        z = self.prior_latents(problem, u, eps)  # (B, S, L, Z)

        node_mask = batch.node_mask[:, None].expand(B, S, N).reshape(B * S, N)
        x = self._sampling_decode(z.reshape(B * S, L, Z), problem.repeat_for_samples(S), node_mask, pad_to)
        return x.view(B, S, N, 3)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def config_dict(self) -> dict:
        return asdict(self.cfg)


def _prior_of(problem: ProblemEncoding) -> MixturePrior:
    """The problem's mixture prior; ValueError for a copy made for decoding only (it has none)."""
    if problem.prior is None:
        raise ValueError("this ProblemEncoding has no prior (a copy for decoding only): use GGIKModel.encode_problem's")
    return problem.prior
