"""What sampling through a compiled decoder (:meth:`ggik.nn.cvae.GGIKModel.compile_decoder`) needs: the few shapes
its passes are padded to, and which exceptions mean that torch.compile failed."""

from __future__ import annotations

__all__ = ["MIN_PADDED_ROWS", "padded_rows", "is_compile_error"]

#: the fewest rows a compiled decoder's pass is padded to (:func:`padded_rows`): fewer shapes for small calls
MIN_PADDED_ROWS = 16


def padded_rows(graphs: int, cap: int | None = None) -> int:
    """How many rows a compiled decoder's pass of ``graphs`` decoded graphs is padded to: the smallest power of two
    >= max(``graphs``, :data:`MIN_PADDED_ROWS`), but at most ``cap`` (a full pass, when ``cap`` >= ``graphs``).
    The passes of any number of goals then take at most log2(cap / MIN_PADDED_ROWS) + 2 shapes, and padding at most
    doubles a pass of MIN_PADDED_ROWS graphs or more."""
    rows = 1 << (max(int(graphs), MIN_PADDED_ROWS) - 1).bit_length()
    return min(rows, cap) if cap is not None and cap >= graphs else rows


def is_compile_error(exc: BaseException) -> bool:
    """Whether ``exc`` is torch.compile failing (torch._dynamo's exceptions, inductor's wrapped in them, a C++
    compile error), not the compiled code's own error."""
    from torch._dynamo.exc import TorchDynamoException
    from torch._inductor.exc import CppCompileError

    return isinstance(exc, (TorchDynamoException, CppCompileError))
