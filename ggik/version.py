"""The ggik version (one place: ``ggik.__version__``, checkpoint headers and error messages read it)."""

__version__ = "0.2.0"
