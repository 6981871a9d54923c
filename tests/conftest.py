"""Test-session settings: every Ray in the suite runs with token authentication, as the Ray that
`tune` starts does, with a token made for the session.

Ray 2.60 reads a process's authentication mode (RAY_AUTH_MODE) when it imports Ray, and when the
variable is unset it decides for itself (on for a new local cluster, recorded in the starting
process's environment; off for a driver given an address), so a suite that let it decide would
mix authenticated and unauthenticated peers between in-process Rays, clusters and `tune`
subprocesses. The mode is therefore set here, before anything imports Ray, and the token reaches
every process in RAY_AUTH_TOKEN, so that the suite writes nothing to ~/.ray. Tests that need other
settings (tests/tuner/test_ray_security.py) run their processes with their own environment.
"""

import os
import secrets

os.environ["RAY_AUTH_MODE"] = "token"
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
