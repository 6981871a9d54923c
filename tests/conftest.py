"""Test-session settings.

Ray 2.60 turns token authentication on for a new local cluster and records that in the starting
process's environment, so a suite that starts Ray in process and then starts clusters and `tune`
subprocesses would mix authenticated and unauthenticated peers. Every Ray in these tests listens
on this machine only, so the suite runs them all with authentication off, consistently.
"""

import os

os.environ["RAY_AUTH_MODE"] = "disabled"
