"""The command line, a frontend of luskin_core like the dashboard: ``luskin`` and ``python -m luskin_cli``."""
