"""A family module whose import exits: for the bad-input corpus."""

import sys

sys.exit(4)
