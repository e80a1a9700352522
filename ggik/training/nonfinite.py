"""How the trainer notices a non-finite loss: checked on the host before each pass's backward, or, in a step that
never waits for its device (:class:`ggik.training.trainer.Trainer`, ``sync_free``), recorded on the device and raised
at the next check (a log or checkpoint step: one host sync there)."""

from __future__ import annotations

import torch

from ggik.errors import GGIKError

__all__ = ["NonFiniteLoss", "NonFiniteWatch"]


class NonFiniteLoss(GGIKError):
    """The training loss became NaN or inf."""


def raise_nonfinite(step: int, stats: dict) -> None:
    """Raise :class:`NonFiniteLoss` for ``step``, naming the loss terms of ``stats`` (0-d tensors or floats)."""
    terms = ", ".join(f"{k} {float(v)}" for k, v in stats.items() if k in ("prior_dist_se",))
    raise NonFiniteLoss(
        f"non-finite loss at step {step} (anchor {float(stats['anchor_se'])}, free {float(stats['free_se'])}, "
        f"kl {float(stats['kl'])}" + (f", {terms})" if terms else ")")
    )


class NonFiniteWatch:
    """The trainer's watch on its loss.

    Args:
        device: the training device.
        deferred: False: :meth:`check_pass` raises at once (a host sync per pass, before the pass's backward, so the
            bad step changes nothing). True: :meth:`record` keeps the first step with a non-finite loss on the device
            (no host sync) and :meth:`check` raises for it later; the steps after it were taken, so the caller must
            not write a checkpoint then.
    """

    def __init__(self, device: torch.device, deferred: bool) -> None:
        self.deferred = deferred
        #: deferred: the first step with a non-finite loss, a 0-d long tensor on the device (-1: none); else None
        self.first = torch.full((), -1, dtype=torch.long, device=device) if deferred else None

    def check_pass(self, step: int, stats: dict[str, torch.Tensor]) -> None:
        """Not deferred: raise :class:`NonFiniteLoss` if the pass's loss ``stats["loss"]`` is not finite."""
        if not self.deferred and not bool(torch.isfinite(stats["loss"])):
            raise_nonfinite(step, {n: v.detach() for n, v in stats.items()})

    def record(self, step: int, loss: torch.Tensor) -> None:
        """Deferred: remember ``step`` on the device if ``loss`` (0-d) is not finite and no step was before it."""
        if self.first is not None:
            self.first = torch.where((self.first < 0) & ~torch.isfinite(loss), step, self.first)

    def check(self, stats: dict) -> None:
        """Deferred: raise :class:`NonFiniteLoss` (one host sync) if a step since the start had a non-finite loss,
        with the terms of ``stats``."""
        if self.first is not None and int(self.first) >= 0:
            raise_nonfinite(int(self.first), stats)
