"""Joining a Ray cluster, failing in one line: nothing answers at the address, it is not a Ray
cluster, this machine has no token, or the cluster refused it.

Ray alone would retry for minutes, printing a warning a second. As with Ray, the token goes to an
explicit HOST:PORT only when the environment says ``RAY_AUTH_MODE=token``, while 'auto' turns it
on when this machine holds a token. What this needs of Ray's private modules is
``tuner.ray_api``'s.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import sys
import tempfile
import threading
import time

from tuner import ray_api
from tuner.errors import EvaluationError

AUTH_MODE_VAR = "RAY_AUTH_MODE"
TOKEN_SOURCES = ("the cluster's token in RAY_AUTH_TOKEN, in a file named by RAY_AUTH_TOKEN_PATH, "
                 "or in ~/.ray/auth_token")


class ClusterConnectionError(EvaluationError):
    """Ray could not be started on this machine, or the cluster at an address could not be
    joined: nothing answers there, it is not a Ray cluster, or it refused this machine's
    authentication token. The message is one line and names the address."""


def _token_source() -> str:
    """Where Ray takes this machine's token from, in its order of precedence."""
    if os.environ.get(ray_api.TOKEN_VARIABLE):
        return ray_api.TOKEN_VARIABLE
    if os.environ.get(ray_api.TOKEN_PATH_VARIABLE):
        return os.environ[ray_api.TOKEN_PATH_VARIABLE]
    return ray_api.DEFAULT_TOKEN_FILE


def bootstrap_address(address: str) -> str | None:
    """HOST:PORT of the cluster's GCS; None where ray.init alone can tell (Ray Client, or no
    cluster found for 'auto')."""
    if address.startswith("ray://"):
        return None
    if address == "auto":
        return ray_api.local_cluster_address()
    return address


def probe_cluster(target: str, address: str, timeout: float) -> None:
    """Fail in one line within ``timeout`` where ray.init would retry for long and fill stderr
    with Ray's warnings: nothing listening at the address, something there that is not a Ray
    cluster, no token on this machine, or a cluster that refuses this machine's token."""
    deadline = time.monotonic() + timeout
    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except TimeoutError:
        raise ClusterConnectionError(
            f"no Ray cluster answers at {address!r}: no connection within {timeout:g} s"
        ) from None
    except (OSError, ValueError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise ClusterConnectionError(f"no Ray cluster answers at {address!r}: {reason}") from None

    import ray  # Ray loads where a cluster is joined, never at start-up (about 1 s)

    token_mode = os.environ.get(AUTH_MODE_VAR, "").lower() == "token"
    if token_mode and not ray_api.token_found():
        raise ClusterConnectionError(
            f"RAY_AUTH_MODE=token, but this machine has no authentication token to join the "
            f"Ray cluster at {address!r}: put {TOKEN_SOURCES}"
        )
    outcome = _ask_gcs(target, deadline - time.monotonic())
    if outcome is None:
        return
    if isinstance(outcome, TimeoutError):
        raise ClusterConnectionError(
            f"{address!r} accepts connections but no Ray cluster answered there within "
            f"{timeout:g} s"
        )
    if isinstance(outcome, getattr(ray.exceptions, "AuthenticationError", ())):
        if token_mode:
            raise ClusterConnectionError(
                f"the Ray cluster at {address!r} refused this machine's authentication token "
                f"(from {_token_source()}): it must be the cluster's own (`ray get-auth-token` "
                "prints it on the head)"
            )
        raise ClusterConnectionError(
            f"the Ray cluster at {address!r} requires token authentication: set "
            f"RAY_AUTH_MODE=token and put {TOKEN_SOURCES}"
        )
    raise ClusterConnectionError(
        f"{address!r} accepts connections but does not answer as a Ray cluster "
        f"({type(outcome).__name__}: {first_line(outcome)})"
    )


def _ask_gcs(target: str, timeout: float) -> BaseException | None:
    """Ask the cluster at ``target`` (``ray_api.ask_gcs``): None on success or where this Ray
    cannot be asked, else the error, or TimeoutError past ``timeout``. Ray's own log lines about
    it (written by its C++ core to file descriptor 2) are kept back unless it succeeds."""
    outcome: list[BaseException | None] = []

    def ask() -> None:
        try:
            ray_api.ask_gcs(target)
        except BaseException as err:  # noqa: BLE001 - handed to the caller
            outcome.append(err)
        else:
            outcome.append(None)

    asking = threading.Thread(target=ask, name="tune2048-ray-probe", daemon=True)
    with _stderr_captured() as captured:
        asking.start()
        asking.join(max(timeout, 0.1))
    if not outcome:
        return TimeoutError()
    if outcome[0] is None and captured.getvalue():
        sys.stderr.write(captured.getvalue())
    return outcome[0]


@contextlib.contextmanager
def _stderr_captured():
    """Send file descriptor 2 to a buffer for the block (yielded, filled when it ends)."""
    captured = io.StringIO()
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield captured
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.write(sink.read().decode(errors="replace"))


def first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__
