"""Neural-network building blocks of ggik (dense E(n)-equivariant graph layers)."""
from .egnn import EGNN, EGNNLayer

__all__ = ["EGNN", "EGNNLayer"]
