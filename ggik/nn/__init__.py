"""Neural-network building blocks of ggik (dense E(n)-equivariant graph layers)."""

from ggik.nn.egnn import EGNN, EGNNLayer

__all__ = ["EGNN", "EGNNLayer"]
