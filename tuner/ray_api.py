"""What tune2048 needs of Ray beyond its public API, in one place: every use of a private name of
Ray's (``ray._private``, ``ray._raylet``) is here, and nowhere else in tune2048.

Ray has no public API for these (its own code reaches them the same way), and a private name may
change in any release. So pyproject.toml promises only the Ray versions CI tests (.ci/run runs
both ends of the window), and each function here looks its name up when called and, where this
Ray lacks it, does what its docstring says instead of failing. Nothing here imports Ray before its
caller has (tune2048 imports Ray once it starts or joins one, with signals held:
``tuner.cluster.ray_session``).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from pathlib import Path

# Ray's own order of precedence for this machine's token (docs: ray-security/token-auth).
TOKEN_VARIABLE = "RAY_AUTH_TOKEN"
TOKEN_PATH_VARIABLE = "RAY_AUTH_TOKEN_PATH"
DEFAULT_TOKEN_FILE = "~/.ray/auth_token"


def on_ray_worker() -> bool:
    """Whether this process is a Ray worker (not a driver), by Ray's public API; the runtime
    context's ``worker`` is not documented: without it, False (a worker is taken for a driver, so
    a ``KeyboardInterrupt`` raised by a family's code there passes for a cancelled unit instead
    of one line). Imports no Ray."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return False
    worker = getattr(ray.get_runtime_context(), "worker", None)
    return getattr(worker, "mode", None) == ray.WORKER_MODE


def reload_config() -> bool:
    """Make an imported Ray read its RAY_* variables again: it reads them once, at import, and
    this is how Ray itself turns token authentication on in a running process
    (``ray._raylet.Config.initialize``). False where this Ray has no such name: the Ray imported
    keeps the values it read (``tuner.cluster.ray_session`` sets RAY_AUTH_MODE before it imports Ray, so
    that only a process that imported Ray earlier depends on this)."""
    if "ray._raylet" not in sys.modules:
        return True  # not imported yet: Ray reads the variables when it is
    config = _private("ray._raylet", "Config")
    if config is None:
        return False
    config.initialize("")
    return True


def token_found() -> bool:
    """Whether this machine holds a Ray authentication token, as Ray looks for one
    (``ray._raylet.AuthenticationTokenLoader``); where this Ray has no such name, whether one of
    the places Ray documents holds a token: RAY_AUTH_TOKEN, else the file RAY_AUTH_TOKEN_PATH
    names, else ~/.ray/auth_token (the tests hold the two to the same answers)."""
    loader = _private("ray._raylet", "AuthenticationTokenLoader")
    if loader is not None:
        loader = loader.instance()
        loader.reset_cache()
        try:
            return bool(loader.has_token(ignore_auth_mode=True))
        except sys.modules["ray"].exceptions.AuthenticationError:
            return False  # RAY_AUTH_TOKEN_PATH names a file that holds no token
    if os.environ.get(TOKEN_VARIABLE, "").strip():
        return True
    path = Path(os.environ.get(TOKEN_PATH_VARIABLE) or DEFAULT_TOKEN_FILE).expanduser()
    try:
        return bool(path.read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return False


def local_cluster_address() -> str | None:
    """HOST:PORT of the cluster ``ray.init(address="auto")`` joins (RAY_ADDRESS, else the one
    started last on this machine: ``ray._private.services.canonicalize_bootstrap_address``);
    None where there is none, or where this Ray has no such name (ray.init then finds it, or
    says there is none, itself)."""
    canonicalize = _private("ray._private.services", "canonicalize_bootstrap_address")
    if canonicalize is None:
        return None
    try:
        return canonicalize("auto")
    except Exception:  # noqa: BLE001 - none found: ray.init says what is missing
        return None


def ask_gcs(address: str) -> bool:
    """Connect a GCS client to ``address`` (``ray._raylet.GcsClient``, which fetches the
    cluster's id, with this machine's token): True once it answered; raises what Ray raises (a
    refused token, something that is not Ray). False where this Ray has no such name: nothing
    was asked (ray.init then reports a refusal itself, after its own retries)."""
    client = _private("ray._raylet", "GcsClient")
    if client is None:
        return False
    client(address=address)
    return True


def failure_signal_handler_kept_back():
    """A block during which ray.init installs no handler for fatal signals in this process
    (``ray._private.ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER``); where this Ray has no
    such name, the block changes nothing (a SIGTERM that one of Ray's threads takes while it
    starts may then print Ray's stack dump)."""
    return _replaced("ray._private.ray_constants", "RAY_DISABLE_FAILURE_SIGNAL_HANDLER", True)


def sigterm_handler_replaced(replacement):
    """A block during which ray.init calls ``replacement(handler)`` instead of installing its
    SIGTERM handler (``ray._private.utils.set_sigterm_handler``); where this Ray has no such
    name, the block changes nothing (Ray installs its handler, which raises SystemExit)."""
    return _replaced("ray._private.utils", "set_sigterm_handler", replacement)


def ray_messages_to(handler):
    """A block during which the messages Ray sends this driver about its processes (a worker or
    a raylet that died, a task it plays again: ``ray._private.worker.listen_error_messages``,
    which prints them on stdout with ``print_to_stdstream``) go to ``handler(text)``, called
    from Ray's thread, instead; where this Ray has no such name, Ray prints them as before."""

    def hand_over(data: dict, ignore_prefix: bool = False) -> None:
        for message in data.get("lines", ()):
            handler(message)

    return _replaced("ray._private.worker", "print_to_stdstream", hand_over)


def _private(module: str, name: str):
    """``module.name`` of Ray's, or None where this Ray has no such module or name."""
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


@contextlib.contextmanager
def _replaced(module: str, name: str, value):
    """``module.name`` of Ray's set to ``value`` for the block and put back after it; nothing is
    done where this Ray has no such name."""
    try:
        target = importlib.import_module(module)
    except ImportError:
        yield
        return
    if not hasattr(target, name):
        yield
        return
    real = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, real)
