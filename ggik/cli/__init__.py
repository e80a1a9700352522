"""Layer 8, the ``ggik`` command line: one module per command group, each thin (parse, call the library, print)."""
from ggik.cli.commands import main

__all__ = ["main"]
