"""``python -m tuner``: the ``tune`` command."""

import sys

from tuner.cli.main import main

sys.exit(main())
