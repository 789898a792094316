"""``python -m luskin_cli`` runs the command line."""

import sys

from luskin_cli.main import main

sys.exit(main())
