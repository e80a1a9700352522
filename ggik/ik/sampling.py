"""From a trained model to joint angles: batched sampling, angle recovery and pose errors."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik.graph import Goals, GraphBatch
from ggik.graph.goal_kinds import goal_errors
from ggik.graph.robot_graph import RobotGraph
from ggik.nn.cvae import GGIKModel
from ggik.nn.distance_geometry import known_residuals
from ggik.nn.encoding import latent_noise

__all__ = [
    "RawSamples",
    "SamplingOptions",
    "sample_joint_angles",
    "shared_noise",
    "call_noise",
    "native_bf16",
    "known_distance_cost",
    "default_graphs_per_pass",
    "CPU_GRAPHS_PER_PASS",
]

#: decoded graphs per network pass on a CPU: passes whose edge tensors stay cache-sized run faster than one huge pass
#: (benchmarks/sampler_price/README.md)
CPU_GRAPHS_PER_PASS = 128
#: the share of a GPU's free memory one pass's edge tensors may take (the rest: the model, LM, the caller's tensors)
GPU_MEMORY_SHARE = 0.25
#: (graphs x N x N x hidden) float32 tensors counted per graph for a pass's peak memory: an EGNN layer holds two or
#: three at once (pre-activation, message, their products); the rest is room for bf16 copies and the caching allocator
EDGE_TENSORS_AT_PEAK = 6
#: the ``torch.backends.cpu.get_cpu_capability()`` level (a prefix) whose kernels use AVX512 instructions: below it
#: ("AVX2", "DEFAULT", ...) a CPU's AVX512-BF16 / AMX units are not used and bf16 is emulated
AVX512_CAPABILITY = "AVX512"


@dataclass
class RawSamples:
    """Unrefined model samples for P problems of one robot, S samples each.

    Attributes:
        q: (P, S, dof) joint angles recovered from the sampled point sets [rad].
        pos_err: (P, S) EE position error [m]; rot_err: (P, S) rotation error [rad].
        points: (P, S, N, 3) sampled point sets in the graph frame [m].
    """

    q: torch.Tensor
    pos_err: torch.Tensor
    rot_err: torch.Tensor
    points: torch.Tensor


def native_bf16(device: torch.device | str) -> bool:
    """Whether ``device`` computes bfloat16 matrix products natively: a CUDA GPU that supports bf16, or a CPU with
    AVX512-BF16 or AMX whose kernels torch dispatches at AVX512 level or higher
    (``torch.backends.cpu.get_cpu_capability()``: ``ATEN_CPU_CAPABILITY=avx2`` or ``default`` lowers it, and the bf16
    instructions then go unused). Elsewhere (e.g. an AVX2-only CPU) bf16 autocast is emulated and several times slower
    than float32, so the sampler runs the network in float32 there. Asked at call time, never at import."""
    device = torch.device(device)
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type == "cpu":
        if not torch.backends.cpu.get_cpu_capability().upper().startswith(AVX512_CAPABILITY):
            return False
        probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
        return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in probes)
    return False


def default_graphs_per_pass(
    model: GGIKModel, num_nodes: int, device: torch.device | str, free_bytes: int | None = None
) -> int:
    """How many graphs (goals x samples) one network pass of ``model`` should decode on ``device``, for graphs of
    ``num_nodes`` nodes.

    On a CPU :data:`CPU_GRAPHS_PER_PASS` (cache-sized passes). On a GPU as many as fit in :data:`GPU_MEMORY_SHARE` of
    its free memory (``free_bytes``: that number [bytes]; None: ``torch.cuda.mem_get_info``), counting
    :data:`EDGE_TENSORS_AT_PEAK` float32 (graphs x N x N x hidden) tensors per graph: a GPU is fast only with
    thousands of graphs per pass, and each pass costs a fixed launch overhead.
    """
    device = torch.device(device)
    if device.type != "cuda":
        return CPU_GRAPHS_PER_PASS
    if free_bytes is None:
        free_bytes = torch.cuda.mem_get_info(device)[0]
    hidden = model.cfg.dec_hidden or model.cfg.hidden
    per_graph = EDGE_TENSORS_AT_PEAK * 4 * num_nodes * num_nodes * hidden
    return max(CPU_GRAPHS_PER_PASS, int(GPU_MEMORY_SHARE * free_bytes) // per_graph)


@dataclass(frozen=True, eq=False)
class SamplingOptions:
    """How :func:`sample_joint_angles` draws (the defaults: fresh noise, every sample as drawn, results on the CPU).

    ``graphs_per_pass``: decoded graphs (goals x samples) per network pass (None: :func:`default_graphs_per_pass`);
    ``bf16``: bfloat16 autocast for the network (None: where the device computes it natively, :func:`native_bf16`);
    ``noise``: ``{"u": (S, L), "eps": (S, L, Z)}`` (:func:`shared_noise`), the same sampling noise for every goal;
    ``oversample`` K: draw K x the samples asked for and keep the best by :func:`known_distance_cost`; ``on_device``:
    the results stay on the model's device."""

    graphs_per_pass: int | None = None
    bf16: bool | None = None
    noise: dict[str, torch.Tensor] | None = None
    oversample: int = 1
    on_device: bool = False

    def __post_init__(self) -> None:
        k = self.oversample
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"oversample must be an integer >= 1, got {k!r}")
        if self.noise is not None and k != 1:
            raise ValueError("oversample takes fresh noise; shared noise fixes the samples (use oversample=1)")


@torch.no_grad()
def sample_joint_angles(
    model: GGIKModel,
    graph: RobotGraph,
    T_goal: torch.Tensor | Goals,
    num_samples: int,
    generator: torch.Generator | None = None,
    options: SamplingOptions | None = None,
) -> RawSamples:
    """Sample ``num_samples`` solutions for each goal (P, 4, 4) of one robot (base-link frame, or checked
    :class:`Goals` of any kind); errors by FK in float64 (the rotation error the goal kind fixes).

    ``options`` (:class:`SamplingOptions`, default ``SamplingOptions()``): goals go through the network in chunks of
    about ``graphs_per_pass`` decoded graphs (goals x samples; None: chosen
    for the model's device by :func:`default_graphs_per_pass`, cache-sized on a CPU, memory-sized on a GPU). ``bf16``:
    bfloat16 autocast for the network; None (default): where the model's device computes bf16 natively
    (:func:`native_bf16`), float32 elsewhere. Angle recovery and FK errors are always float64, on the model's device
    (a CUDA model's call then moves only the results to the CPU; ``on_device``: they stay there). ``noise``:
    ``{"u": (S, L), "eps": (S, L, Z)}`` (:func:`shared_noise`), the same
    sampling noise for every goal (sample s of every goal decodes the same latent draw: coherent samples along a
    path), instead of fresh noise from ``generator`` (:func:`call_noise`: drawn for the whole call before the
    passes, on the generator's device, so that the samples of goal p depend on the generator and p, not on the pass
    size, the device or ``bf16``). ``oversample`` K: draw K x ``num_samples`` per goal and keep the
    ``num_samples`` whose point sets best satisfy the problem's known distances (:func:`known_distance_cost`, no FK),
    in the order they were drawn; angles are recovered for the kept ones only (K = 1: every sample, as drawn).
    """
    opts = SamplingOptions() if options is None else options
    graphs_per_pass, bf16, noise, oversample = opts.graphs_per_pass, opts.bf16, opts.noise, opts.oversample
    model.check_graph(graph)
    param = next(model.parameters())
    device = param.device  # angle recovery and FK run where the model runs, in float64; results come back on the CPU
    goals = graph.goals(T_goal.to(torch.float64) if isinstance(T_goal, torch.Tensor) else T_goal).to(
        torch.float64, device
    )
    drawn = int(num_samples) * oversample
    if graphs_per_pass is None:
        graphs_per_pass = default_graphs_per_pass(model, graph.num_nodes, device)
    chunk = max(1, graphs_per_pass // max(1, drawn))
    if bf16 is None:
        bf16 = native_bf16(param.device)
    if noise is None:  # every latent of the call, drawn before the passes: they do not depend on the pass size
        noise = call_noise(model, graph, goals.shape[0], drawn, generator, param)
    else:  # the same draw for every goal
        noise = {k: v[None].expand((goals.shape[0],) + v.shape) for k, v in noise.items()}
    qs, pts = [], []
    pad_to = chunk * drawn  # a compiled decoder pads the passes to a few shapes, none above a full pass
    for start in range(0, goals.shape[0], chunk):
        T = goals[start : start + chunk]
        batch = GraphBatch.from_graph(graph, T_goal=T).to(device=param.device, dtype=param.dtype)
        pass_noise = {k: v[start : start + chunk].to(param.device) for k, v in noise.items()}
        with torch.autocast(param.device.type, dtype=torch.bfloat16, enabled=bf16):
            points = model.sample(batch, drawn, noise=pass_noise, pad_to=pad_to)
        points = points.to(dtype=torch.float64)
        if oversample > 1:
            cost = known_distance_cost(points, batch.known_distances.to(torch.float64), batch.known_mask)
            keep = cost.topk(int(num_samples), dim=1, largest=False).indices.sort(dim=1).values  # (chunk, S)
            points = points.gather(1, keep[..., None, None].expand(-1, -1, *points.shape[2:]))
        qs.append(graph.joint_angles(points, T[:, None]))
        pts.append(points)
    q = torch.cat(qs)
    pos, rot = goal_errors(graph.robot.fk(q), goals.in_base[:, None], goals.kind, graph.tool_axis)
    points = torch.cat(pts)
    if opts.on_device:  # the caller goes on where the model is (a whole solve on the GPU)
        return RawSamples(q=q, pos_err=pos, rot_err=rot, points=points)
    return RawSamples(q=q.cpu(), pos_err=pos.cpu(), rot_err=rot.cpu(), points=points.cpu())


def known_distance_cost(points: torch.Tensor, known_distances: torch.Tensor, known_mask: torch.Tensor) -> torch.Tensor:
    """(P, S) how far sampled point sets (P, S, N, 3) [m] are from their problems' known distances (P, N, N) [m] on the
    known edges (P, N, N) bool: the sum over known edges of (|x_i - x_j|^2 - d_ij^2)^2 [m^4]. Ranks samples nearly as
    their true end-effector errors do (rank correlation 0.47-0.81 on v6, MODEL_CARD.md), without any FK."""
    P, S, N, _ = points.shape
    expand = lambda t: t[:, None].expand(P, S, N, N).reshape(P * S, N, N)  # noqa: E731
    r, _ = known_residuals(points.reshape(P * S, N, 3), expand(known_distances), expand(known_mask))
    return (r * r).sum((-1, -2)).view(P, S) / 2  # each edge appears twice in the symmetric mask


def shared_noise(
    model: GGIKModel, graph: RobotGraph, num_samples: int, generator: torch.Generator | None = None
) -> dict[str, torch.Tensor]:
    """Sampling noise for ``num_samples`` samples of any goal of ``graph``'s robot: ``{"u": (S, L), "eps": (S, L, Z)}``
    (float32, CPU), uniform and standard normal, with L the model's latent nodes for this graph
    (``model.latent_mask``: the N nodes, or 1 for a per-graph latent) and Z ``model.cfg.latent``."""
    return latent_noise(
        (int(num_samples), _latent_nodes(model, graph)), model.cfg.latent, generator, torch.float32, "cpu"
    )


def call_noise(
    model: GGIKModel,
    graph: RobotGraph,
    num_goals: int,
    num_samples: int,
    generator: torch.Generator | None,
    param: torch.Tensor,
) -> dict[str, torch.Tensor]:
    """The sampling noise of a whole :func:`sample_joint_angles` call: ``{"u": (P, S, L), "eps": (P, S, L, Z)}``
    (uniform, then standard normal; :meth:`GGIKModel.sample`'s layout) in ``param``'s dtype, drawn on ``generator``'s
    device (None: the global generator of ``param``'s device). A CPU generator gives the same latents for a CPU and a
    CUDA model, and one pass of all P goals draws exactly these. Size P x S x L x (Z + 1) numbers (32 samples of 1000
    goals of 18 nodes: 5 M with Z = 8)."""
    size = (int(num_goals), int(num_samples), _latent_nodes(model, graph))
    return latent_noise(size, model.cfg.latent, generator, param.dtype, param.device)


def _latent_nodes(model: GGIKModel, graph: RobotGraph) -> int:
    """L: the model's latent nodes for ``graph`` (``model.latent_mask``: its N nodes, or 1 for a per-graph latent)."""
    return int(model.latent_mask(torch.ones(1, graph.num_nodes, dtype=torch.bool)).shape[1])
