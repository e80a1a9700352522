"""Atomic file writing: a file is either the complete new content or left as it was."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["atomic_write", "atomic_write_text", "load_torch_file"]


def atomic_write(path: str | Path, write: Callable[[IO[bytes]], object]) -> Path:
    """Call ``write(f)`` on a temporary file beside ``path``, fsync it, then rename it over ``path``.

    If ``write`` raises, the temporary file is removed and ``path`` is untouched. Parent folders are
    created as needed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual permissions
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def load_torch_file(path: str | Path, expected_format: str | tuple[str, ...], what: str) -> dict:
    """Load a ggik ``torch.save`` payload (tensors and plain data only) and check its ``format`` tag.

    ``expected_format``: the accepted tag, or a tuple of accepted tags (e.g. full checkpoints and
    weights-only exports). Raises ``FileNotFoundError`` for a missing file, and ``GGIKError`` for a
    corrupt or truncated file or one of another format, naming ``what`` (e.g. "checkpoint") in the message.
    """
    import torch

    from ggik.errors import GGIKError
    from ggik.version import __version__

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for damaged files
        raise GGIKError(
            f"{path} is not a readable ggik {what} (corrupt or truncated?): {type(exc).__name__}: {exc}"
        ) from None
    accepted = (expected_format,) if isinstance(expected_format, str) else tuple(expected_format)
    if not isinstance(payload, dict) or payload.get("format") not in accepted:
        found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
        reads = " or ".join(repr(f) for f in accepted)
        raise GGIKError(f"{path}: incompatible {what} format {found!r}; this ggik {__version__} reads {reads}")
    return payload
