"""``python -m ggik.cli`` (e.g. under ``torchrun -m ggik.cli train ...``)."""

import sys

from ggik.cli import main

sys.exit(main())
