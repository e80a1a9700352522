"""The ``ggik`` commands: name, the module that implements it and its one-line help, importing nothing heavy.

``ggik --help`` lists these lines without importing the commands' modules (and so torch); running a command imports
its module alone (:func:`ggik.cli.build_parser`). Each module's ``add_*_parser`` takes its help from here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Command", "COMMANDS", "HELP"]


@dataclass(frozen=True)
class Command:
    """One command: ``ggik NAME``, implemented by ``module``'s function ``adder`` (which adds its parser)."""

    name: str
    module: str
    adder: str
    help: str


#: every command, in the order of ``ggik --help``
COMMANDS = (
    Command("robot", "ggik.cli.inspect", "add_robot_parser", "inspect robots"),
    Command("graph", "ggik.cli.inspect", "add_graph_parser", "GGIK graphs"),
    Command("train", "ggik.cli.train", "add_train_parser", "train a GGIK model (resumable; DDP under torchrun)"),
    Command("adapt", "ggik.cli.adapt", "add_adapt_parser", "adapt a model to one arm (a URDF file) in minutes"),
    Command("data", "ggik.cli.data", "add_data_parser", "fixed problem sets"),
    Command("solve", "ggik.cli.solve", "add_solve_parser", "IK solutions of one goal (a pose or a partial goal)"),
    Command("path", "ggik.cli.path", "add_path_parser", "a valid joint trajectory along an end-effector path (CSV)"),
    Command("view", "ggik.cli.view", "add_view_parser", "an interactive 3D viewer of solutions and paths (browser)"),
    Command("eval", "ggik.cli.evaluate", "add_eval_parser", "the evaluation suite (Markdown + CSV tables)"),
    Command("info", "ggik.cli.model_files", "add_info_parser", "what a checkpoint holds"),
    Command(
        "export",
        "ggik.cli.model_files",
        "add_export_parser",
        "write the weights-only form of a checkpoint (what ggik ships; cannot be resumed)",
    ),
    Command(
        "demo",
        "ggik.cli.demo",
        "add_demo_parser",
        "solve a few goals with the shipped model: two training robots and an unseen random one",
    ),
)

#: command name -> its one-line help
HELP = {c.name: c.help for c in COMMANDS}
