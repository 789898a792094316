"""``python -m luskin_core`` runs the command line."""

import sys

from .cli import main

sys.exit(main())
