"""``python -m profinsight``: the same command as the ``profinsight`` console script (an MCP
client configuration can name the interpreter of a virtual environment without its scripts)."""

import sys

from .cli import main

sys.exit(main())
