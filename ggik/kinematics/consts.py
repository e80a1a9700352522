"""Float64 numpy constants turned into torch tensors once per (dtype, device) and cached."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

Tensors = dict[str, torch.Tensor]


class ConstCache:
    """Holds numpy arrays; :meth:`get` returns them as tensors of the requested dtype/device.

    Floating arrays take the requested dtype; integer and bool arrays keep theirs. ``derive`` may add
    tensors computed from the converted ones (run once per dtype/device).
    """

    def __init__(self, arrays: dict[str, np.ndarray], derive: Callable[[Tensors], Tensors] | None = None) -> None:
        self.arrays = arrays
        self._derive = derive
        self._cache: dict[tuple[torch.dtype, torch.device], Tensors] = {}

    def get(self, dtype: torch.dtype, device: torch.device) -> Tensors:
        key = (dtype, torch.device(device))
        if key not in self._cache:
            out = {}
            for k, v in self.arrays.items():
                t = torch.as_tensor(v, device=device)
                out[k] = t.to(dtype) if t.is_floating_point() else t
            if self._derive is not None:
                out.update(self._derive(out))
            self._cache[key] = out
        return self._cache[key]
