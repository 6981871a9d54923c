"""Ray's exposure: the embedded Ray listens on every interface, so it runs with token
authentication; joining a cluster works with the cluster's token and fails in one line, within a
bound, when the address cannot be reached or refuses this machine's token.

The suite runs with token authentication and a session token in RAY_AUTH_TOKEN (tests/conftest.py);
the processes here that need other settings get their own environment.
"""

from __future__ import annotations

import ast
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from ray.cluster_utils import Cluster

ROOT = Path(__file__).resolve().parents[3]
PROJECT_CODE = ("engine", "tuner", "bench", "examples")

# A driver that tries to join the Ray at argv[1] and prints one line: "joined" or the error.
JOIN = """
import sys, time
from tuner.cluster.ray_evaluator import RayEvaluator
from tuner.cluster.ray_session import ClusterConnectionError
started = time.monotonic()
try:
    RayEvaluator(address=sys.argv[1], connect_timeout=float(sys.argv[2])).close()
except ClusterConnectionError as err:
    print(err)
else:
    print("joined")
print(f"{time.monotonic() - started:.2f}")
"""


def environment(**changes: str | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def join(address: str, timeout: float = 20.0, **changes: str | None):
    """(the line the driver printed, seconds it took, its stderr)"""
    done = subprocess.run([sys.executable, "-c", JOIN, address, str(timeout)],
                          env=environment(**changes), capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    line, seconds = done.stdout.splitlines()
    return line, float(seconds), done.stderr


# ---- the embedded Ray ---------------------------------------------------------------------------

EMBEDDED = """
import json, os, subprocess, sys
from tuner.cluster.ray_evaluator import RayEvaluator
evaluator = RayEvaluator(workers=1)
import ray
from ray._raylet import AuthenticationMode, get_authentication_mode
gcs = ray.get_runtime_context().gcs_address
def join(**changes):
    env = {**os.environ, **changes}
    done = subprocess.run([sys.executable, "-c", sys.argv[1], gcs, "20"], env=env,
                          capture_output=True, text=True, timeout=300)
    return done.stdout.splitlines()[0] if done.stdout else done.stderr
report = {
    "mode": os.environ.get("RAY_AUTH_MODE"),
    "token_mode": get_authentication_mode() == AuthenticationMode.TOKEN,
    "without_token": join(RAY_AUTH_MODE="disabled"),
    "wrong_token": join(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN="0" * 64),
    "own_token": join(RAY_AUTH_MODE="token"),
}
evaluator.close()
report["mode_after_close"] = os.environ.get("RAY_AUTH_MODE")
print(json.dumps(report))
"""


@pytest.mark.ray
def test_the_embedded_ray_runs_with_token_authentication_whatever_the_environment(tmp_path):
    """Even with RAY_AUTH_MODE=disabled in the environment: the token is generated in ~/.ray,
    a client without it or with another token is refused, and Ray warns about nothing."""
    done = subprocess.run(
        [sys.executable, "-c", EMBEDDED, JOIN], cwd=tmp_path, capture_output=True, text=True,
        timeout=600, check=False,
        env=environment(HOME=str(tmp_path), RAY_AUTH_MODE="disabled", RAY_AUTH_TOKEN=None),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["mode"] == "token" and report["token_mode"]
    assert "requires token authentication" in report["without_token"]
    assert "refused this machine's authentication token" in report["wrong_token"]
    assert report["own_token"] == "joined"
    assert report["mode_after_close"] == "disabled"  # the caller's environment, put back
    token = (tmp_path / ".ray" / "auth_token").read_text()
    assert len(token) == 64 and int(token, 16) >= 0
    assert "Token authentication" not in done.stderr and "WARNING" not in done.stderr


def test_no_project_code_turns_ray_authentication_off():
    """Only the tests may set RAY_AUTH_MODE=disabled; tune2048's own code never does."""
    offenders = []
    for package in PROJECT_CODE:
        for path in sorted((ROOT / package).rglob("*.py")):
            strings = {node.value for node in ast.walk(ast.parse(path.read_text(), str(path)))
                       if isinstance(node, ast.Constant) and isinstance(node.value, str)}
            mentions_mode = any("AUTH_MODE" in s for s in strings)
            if any("AUTH_MODE=disabled" in s.replace(" ", "") for s in strings) or (
                    mentions_mode and any(s.strip().lower() == "disabled" for s in strings)):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders


# ---- joining a cluster with authentication on ---------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    """A head with no CPU and one worker node, both with token authentication (the session's)."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    yield cluster
    cluster.shutdown()


SMALL_RUN = {
    "run": {"name": "secure", "output_dir": "runs", "seed": 5},
    "family": "classic",
    "params": {
        "lost_penalty": {"fixed": 200000},
        "merges_weight": {"init": 700, "low": 10, "high": 10000, "scale": "log"},
        "empty_weight": {"init": 270, "low": 10, "high": 10000, "scale": "log"},
    },
    "search": {"depth": 0},
    "evaluation": {"games": 4},
    "cmaes": {"sigma0": 0.2, "popsize": 4, "max_generations": 1},
    "ray": {"games_per_task": 2},
    "validation": {"games": 2, "top_k": 1},
}


def tune(tmp_path: Path, *args: str, **changes: str | None) -> tuple[subprocess.CompletedProcess,
                                                                      float]:
    config = tmp_path / "secure.yaml"
    config.write_text(yaml.safe_dump(SMALL_RUN))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tuner", "--config", str(config), "--quiet", *args],
        cwd=tmp_path, env=environment(**changes), capture_output=True, text=True, timeout=600,
        check=False,
    )
    return done, time.monotonic() - started


def test_tune_joins_with_the_clusters_token_in_the_default_file(cluster, tmp_path):
    """docs/cluster.md's recipe: RAY_AUTH_MODE=token, and the head's token in ~/.ray/auth_token."""
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(os.environ["RAY_AUTH_TOKEN"])
    done, _ = tune(tmp_path, "--address", cluster.address, HOME=str(home), RAY_AUTH_MODE="token",
                   RAY_AUTH_TOKEN=None)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runs" / "secure" / "best.yaml").exists()


@pytest.mark.parametrize(("changes", "says"), [
    ({"RAY_AUTH_MODE": None, "RAY_AUTH_TOKEN": None},
     ("requires token authentication: set RAY_AUTH_MODE=token and put the cluster's token in "
      "RAY_AUTH_TOKEN, in a file named by RAY_AUTH_TOKEN_PATH, or in ~/.ray/auth_token")),
    ({"RAY_AUTH_TOKEN": "0" * 64},
     "refused this machine's authentication token (from RAY_AUTH_TOKEN)"),
    ({"RAY_AUTH_TOKEN": None},
     "RAY_AUTH_MODE=token, but this machine has no authentication token"),
], ids=["no-authentication", "wrong-token", "no-token"])
def test_a_refused_token_is_one_line_at_once(cluster, tmp_path, changes, says):
    line, seconds, stderr = join(cluster.address, HOME=str(tmp_path), **changes)
    assert says in line and repr(cluster.address) in line
    assert seconds < 10  # Ray alone retries for 20 s, a warning a second
    assert not stderr  # Ray's InvalidAuthToken warnings are kept back


def test_tune_reports_a_refused_token_without_ray_noise(cluster, tmp_path):
    done, seconds = tune(tmp_path, "--address", cluster.address, RAY_AUTH_TOKEN="0" * 64)
    assert done.returncode == 1
    assert f"the Ray cluster at {cluster.address!r} refused this machine's authentication " \
           "token" in done.stderr
    assert "InvalidAuthToken" not in done.stderr and "Traceback" not in done.stderr
    assert seconds < 30


# ---- an address where no Ray answers --------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.ray
def test_an_address_where_nothing_listens_fails_at_once_naming_it():
    address = f"127.0.0.1:{free_port()}"
    line, seconds, stderr = join(address, timeout=5)
    assert line == f"no Ray cluster answers at {address!r}: Connection refused"
    assert seconds < 5
    assert not stderr


@pytest.mark.ray
def test_an_address_that_is_not_ray_fails_within_the_connect_timeout():
    """Something accepts connections but never speaks Ray's protocol."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        line, seconds, _stderr = join(address, timeout=3)
    assert line == f"{address!r} accepts connections but no Ray cluster answered there within 3 s"
    assert 3 <= seconds < 6


def test_a_connect_timeout_must_be_positive():
    from tuner.cluster.ray_evaluator import RayEvaluator

    with pytest.raises(ValueError, match="connect_timeout must be positive, got 0"):
        RayEvaluator(address="127.0.0.1:1", connect_timeout=0)
