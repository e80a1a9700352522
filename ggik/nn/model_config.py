"""The architecture of the GGIK CVAE (:class:`ggik.nn.cvae.GGIKModel`): :class:`ModelConfig`, the one source of its
defaults. The options are described in :mod:`ggik.nn.cvae`."""

from __future__ import annotations

from dataclasses import dataclass

from ggik.errors import GGIKError
from ggik.graph.conventions import GRAPH_CONVENTIONS

__all__ = ["ModelConfig"]


@dataclass
class ModelConfig:
    """Architecture of :class:`ggik.nn.cvae.GGIKModel` (one source of defaults): the defaults build the shipped model's
    architecture (630,386 parameters). Keys a checkpoint does not record are not read from here
    (:func:`ggik.checkpoint.load_checkpoint`)."""

    dim: int = 64  #: node feature width of the graph networks
    hidden: int = 128  #: hidden width of their MLPs
    enc_layers: int = 3  #: EGNN layers of each encoder
    dec_layers: int = 5  #: EGNN layers of the decoder
    dec_dim: int = 0  #: node feature width of the decoder (0: ``dim``); a narrower decoder samples for fewer FLOPs
    dec_hidden: int = 0  #: hidden width of the decoder's MLPs (0: ``hidden``)
    latent: int = 16  #: size of the per-node latent z
    prior_components: int = 16  #: K, Gaussians in the mixture prior
    #: "node": a mixture per node (reference); "graph": one component per sample for all nodes
    prior_mixture: str = "node"
    max_index: int = 12  #: joint indices from either end are one-hot encoded up to this value
    goal_features: bool = False  #: append the goal (translation, rotation vector) to every node
    coord_gain: float = 1e-3  #: initial gain of the coordinate heads
    pin_anchors: bool = True  #: keep the known anchor positions fixed in the partial encoder and decoder
    anchor_frame: bool = True  #: coordinate updates may also move along the axes of the anchors' base frame
    min_log_std: float = -6.0  #: clamp of predicted log standard deviations
    max_log_std: float = 2.0
    #: "egnn" (dense EGNN over the complete graph per sample) or "node" (per-node MLP, NodeDecoder)
    decoder: str = "egnn"
    residual_inputs: bool = True  #: decoder layers see the known-distance residuals (and step along their gradient)
    gn_steps: int = 2  #: learned-length Gauss-Newton moves at the end of the decoder (0 = none)
    gn_init: float = 1.0  #: initial coefficient of those moves (1 = plain damped Gauss-Newton steps)
    gn_damping: float = 1e-2  #: their damping, relative to the mean diagonal of J^T J
    gn_solver: str = "full"  #: "full": the (3M x 3M) Gauss-Newton system; "jacobi": its diagonal 3 x 3 blocks per node
    #: the model reads the arm's signed link volumes (handedness, :mod:`ggik.graph.handedness`): decoder layers see
    #: their residuals and the Gauss-Newton moves take them; every such part starts at zero (off: the models up to v10).
    #: The EGNN decoder only (the node decoder has no layers to read them)
    volume_inputs: bool = False
    latent_scope: str = "node"  #: "node": a latent per node (reference); "graph": one latent per graph
    #: the graph convention the model works on (:mod:`ggik.graph.conventions`): "frames" (the file's joint frames, the
    #: models v1-v9, and the recipe from scratch, untried on canonical graphs) or "canonical" (a function of the joint
    #: axes: every file of one arm is the same problem; the shipped v10, fine-tuned on them from v9)
    graph: str = "frames"

    def check(self) -> None:
        """Raise ValueError on a setting no model can be built with (``volume_inputs`` with the node decoder:
        :class:`ggik.errors.GGIKError`, a ValueError too)."""
        choices = {
            "prior_mixture": ("graph", "node"),
            "decoder": ("egnn", "node"),
            "latent_scope": ("graph", "node"),
            "gn_solver": ("full", "jacobi"),
            "graph": GRAPH_CONVENTIONS,
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"model.{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.decoder == "node" and not self.anchor_frame:
            raise ValueError("model.decoder='node' places nodes along the anchor frame: it needs anchor_frame=True")
        if self.volume_inputs and self.decoder != "egnn":
            raise GGIKError(
                "model.volume_inputs reaches the decoder's layers through the EGNN decoder only (ggik/nn/decoders.py, "
                "VolumeInputs); the node decoder would skip them: use decoder='egnn' with volume_inputs=True"
            )
        if self.graph == "canonical" and self.goal_features:
            raise ValueError(
                "model.goal_features reads the goal's whole rotation, whose roll about the last axis depends on the "
                "file even on canonical graphs (ggik/graph/conventions.py, rule 5): use goal_features=False with "
                "graph='canonical'"
            )
        if self.dec_dim < 0 or self.dec_hidden < 0:
            raise ValueError(
                f"model.dec_dim and model.dec_hidden must be >= 0 (0: dim, hidden), got "
                f"{self.dec_dim}, {self.dec_hidden}"
            )
        if self.gn_steps < 0 or (self.decoder == "egnn" and self.gn_steps > self.dec_layers):
            raise ValueError(
                f"model.gn_steps must be in [0, dec_layers] = [0, {self.dec_layers}] for the EGNN decoder, "
                f"got {self.gn_steps} (with fewer decoder layers, set model.gn_steps as well)"
            )

    @property
    def node_features(self) -> int:
        return 3 + 4 + 2 * (self.max_index + 1) + 1 + (6 if self.goal_features else 0)
