"""``python -m cli``: the ``tune`` command."""

import sys

from cli.main import main

sys.exit(main())
