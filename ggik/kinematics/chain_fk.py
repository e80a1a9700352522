"""Batched forward kinematics of a serial chain: the constants derived once per dtype and device, and the frames of
the moving joints with the end-effector pose in few tensor operations (one batched product per joint), the hot path
of the LM solver.

The chain is ``pre[0] M_0 pre[1] M_1 ... pre[J-1] M_{J-1} tool`` (base-link frame; ``pre[k]`` the fixed transforms up
to moving joint k's frame, ``M_k`` its motion). Joint k's motion is ``I + sin(v) K + (1 - cos v) K^2`` (revolute about
the unit axis a, K its cross-product matrix) or ``I + v [0 a; 0 0]`` (prismatic): linear in (sin v, 1 - cos v, v)
masked by the joint's type. So ``M_k next_k`` (``next_k``: the fixed transform after joint k, ``pre[k+1]`` or the tool)
is ``next_k`` plus one small matrix product for all joints at once.
"""

from __future__ import annotations

import torch

from ggik.kinematics import geometry as geo

__all__ = ["chain_constants", "chain_frames"]


def chain_constants(c: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Constants derived from a chain's (``axes`` (J, 3), ``pre`` (J, 4, 4), ``tool`` (4, 4), ``prismatic`` (J,)):
    ``K``, ``K2`` (J, 3, 3) the axes' cross-product matrices and their squares, ``next`` (J, 4, 4), ``motion_next``
    (J, 3, 16) the three motion terms times ``next``, flattened, and ``motion_mask`` (J, 3) (1, 1, 0) for a revolute and
    (0, 0, 1) for a prismatic joint."""
    K = geo.skew(c["axes"])
    K2 = K @ K
    nxt = torch.cat([c["pre"][1:], c["tool"][None]])
    basis = torch.zeros(K.shape[:-2] + (3, 4, 4), dtype=K.dtype, device=K.device)
    basis[:, 0, :3, :3], basis[:, 1, :3, :3], basis[:, 2, :3, 3] = K, K2, c["axes"]
    pris = c["prismatic"].to(K.dtype)[:, None]
    mask = torch.cat([1.0 - pris, 1.0 - pris, pris], -1)
    return {"K": K, "K2": K2, "next": nxt, "motion_next": (basis @ nxt[:, None]).flatten(-2), "motion_mask": mask}


def chain_frames(c: dict[str, torch.Tensor], q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Frames of the moving joints before their own motion (..., J, 4, 4) and the EE pose (..., 4, 4), base-link
    frame, for independent joint values q (..., dof) [rad or m] and a chain's constants ``c`` (:func:`chain_constants`
    plus ``A`` (J, dof), ``b`` (J,): the moving joints' values ``v = A q + b``, mimic joints included)."""
    v = q.reshape(-1, q.shape[-1]) @ c["A"].T + c["b"]  # (n, J)
    coef = torch.stack([torch.sin(v), 1.0 - torch.cos(v), v], -1) * c["motion_mask"]
    steps = (coef[..., None, :] @ c["motion_next"]).reshape(v.shape + (4, 4)) + c["next"]  # M_k next_k, (n, J, 4, 4)
    F = c["pre"][0].expand(v.shape[0], 4, 4)
    frames = [F]
    for k in range(v.shape[1] - 1):
        F = torch.bmm(F, steps[:, k])
        frames.append(F)
    T = torch.bmm(F, steps[:, -1])
    lead = q.shape[:-1]
    return torch.stack(frames, 1).reshape(lead + (v.shape[1], 4, 4)), T.reshape(lead + (4, 4))
