"""tuner.ray_api: the one module that uses Ray's private names, each with what it does where a Ray
version lacks the name (the name is taken away here to see it)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
import ray

from tuner import ray_api
from tuner.cluster import ray_join, ray_session

ROOT = Path(__file__).resolve().parents[3]
PRIVATE = re.compile(r"\bray\._private\b|\bray\._raylet\b|\b_raylet\b")


def test_only_ray_api_names_rays_private_modules():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in ("engine", "tuner", "cli", "bench", "examples")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != ROOT / "tuner" / "ray_api.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert not offenders


def without(monkeypatch, module: str, name: str) -> None:
    """Ray as a version without ``module.name`` would be."""
    monkeypatch.delattr(sys.modules[module], name)


# ---- whether this process is a Ray worker: public API -------------------------------------------

@pytest.mark.ray
def test_a_ray_worker_knows_it_is_one_and_the_driver_that_it_is_not():
    session = ray_session.RaySession(workers=1)
    try:
        on_worker = ray.remote(num_cpus=1)(ray_api.on_ray_worker)
        assert ray.get(on_worker.remote()) is True
        assert ray_api.on_ray_worker() is False
    finally:
        session.close()


def test_without_the_runtime_contexts_worker_a_process_is_taken_for_a_driver(monkeypatch):
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    worker = SimpleNamespace(worker=SimpleNamespace(mode=ray.WORKER_MODE))
    monkeypatch.setattr(ray, "get_runtime_context", lambda: worker)
    assert ray_api.on_ray_worker() is True
    monkeypatch.setattr(ray, "get_runtime_context", lambda: SimpleNamespace())
    assert ray_api.on_ray_worker() is False


@pytest.mark.subprocess
def test_a_process_without_ray_is_no_worker_and_imports_no_ray():
    code = ("import sys\nfrom tuner import ray_api\n"
            "print(ray_api.on_ray_worker(), 'ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.split() == ["False", "False"]


# ---- Ray's configuration, read again ------------------------------------------------------------

RELOAD = textwrap.dedent("""
    import json, os, sys
    from tuner import ray_api
    report = {"before_import": ray_api.reload_config()}
    import ray._raylet
    from ray._raylet import AuthenticationMode, get_authentication_mode
    def mode(value):
        os.environ["RAY_AUTH_MODE"] = value
        reloaded = ray_api.reload_config()
        return reloaded, get_authentication_mode() == AuthenticationMode.TOKEN
    report["disabled"] = mode("disabled")
    report["token"] = mode("token")
    del ray._raylet.Config  # a Ray without it
    report["without_config"] = mode("disabled")
    print(json.dumps(report))
""")


@pytest.mark.subprocess
def test_an_imported_ray_reads_its_mode_again_and_keeps_it_without_config():
    """In a process of its own: the mode is Ray's, process-wide."""
    done = subprocess.run([sys.executable, "-c", RELOAD], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    report = json.loads(done.stdout.splitlines()[-1])
    assert report == {"before_import": True, "disabled": [True, False], "token": [True, True],
                      "without_config": [False, True]}


# ---- this machine's token -----------------------------------------------------------------------

TOKEN = "ab" * 32
TOKEN_CASES = {  # name: (variables, files under HOME); HOME in a value is the case's home
    "none": ({}, {}),
    "variable": ({"RAY_AUTH_TOKEN": TOKEN}, {}),
    "path": ({"RAY_AUTH_TOKEN_PATH": "HOME/token"}, {"token": TOKEN}),
    "default-file": ({}, {".ray/auth_token": TOKEN}),
    "path-missing": ({"RAY_AUTH_TOKEN_PATH": "HOME/none"}, {".ray/auth_token": TOKEN}),
    "blank-file": ({}, {".ray/auth_token": " \n"}),
    "blank-variable": ({"RAY_AUTH_TOKEN": " "}, {}),
    "empty-variable": ({"RAY_AUTH_TOKEN": ""}, {".ray/auth_token": TOKEN}),
}
TOKENS = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    import ray._raylet
    from tuner import ray_api
    found = {}
    for name, (variables, files) in json.loads(sys.argv[1]).items():
        home = Path(sys.argv[2]) / name
        (home / ".ray").mkdir(parents=True)
        for file, text in files.items():
            (home / file).write_text(text)
        os.environ.pop("RAY_AUTH_TOKEN", None)
        os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
        os.environ.update({k: v.replace("HOME", str(home)) for k, v in variables.items()},
                          HOME=str(home))
        loader = ray._raylet.AuthenticationTokenLoader
        with_loader = ray_api.token_found()
        del ray._raylet.AuthenticationTokenLoader  # a Ray without it
        found[name] = [with_loader, ray_api.token_found()]
        ray._raylet.AuthenticationTokenLoader = loader
    print(json.dumps(found))
""")


@pytest.mark.subprocess
def test_a_token_is_found_where_ray_finds_one_with_or_without_its_loader(tmp_path):
    """In a process of its own: Ray's loader caches the token for the whole process."""
    done = subprocess.run([sys.executable, "-c", TOKENS, json.dumps(TOKEN_CASES), str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    found = json.loads(done.stdout.splitlines()[-1])
    expected = {"none": False, "variable": True, "path": True, "default-file": True,
                "path-missing": False, "blank-file": False, "blank-variable": False,
                "empty-variable": True}
    assert found == {name: [value, value] for name, value in expected.items()}


# ---- joining: the cluster for 'auto', and the GCS asked -----------------------------------------

def test_auto_finds_ray_address_and_nothing_without_rays_function(monkeypatch):
    import ray._private.services  # noqa: F401 - what ray_api looks in

    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6399")
    assert ray_join.bootstrap_address("auto").endswith(":6399")
    without(monkeypatch, "ray._private.services", "canonicalize_bootstrap_address")
    assert ray_join.bootstrap_address("auto") is None  # ray.init finds it itself


def test_without_a_gcs_client_only_the_connection_is_probed(monkeypatch):
    """Something that is not Ray passes the probe (ray.init then reports it, after its own
    retries) where this Ray has no GcsClient to ask it with; with one, it fails the probe
    (tests/tuner/cluster/test_ray_security.py, in a process of its own)."""
    without(monkeypatch, "ray._raylet", "GcsClient")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        assert ray_join.probe_cluster(address, address, timeout=1) is None


# ---- ray.init's signal handlers, kept back ------------------------------------------------------

def test_rays_failure_handler_is_kept_back_for_the_block_and_nothing_happens_without_it(
        monkeypatch):
    from ray._private import ray_constants

    real = ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER
    with ray_session._ray_failure_handler_kept_back():
        assert ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER is True
    assert ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER is real
    without(monkeypatch, "ray._private.ray_constants", "RAY_DISABLE_FAILURE_SIGNAL_HANDLER")
    with ray_session._ray_failure_handler_kept_back():
        assert not hasattr(ray_constants, "RAY_DISABLE_FAILURE_SIGNAL_HANDLER")
    assert not hasattr(ray_constants, "RAY_DISABLE_FAILURE_SIGNAL_HANDLER")


def test_without_rays_sigterm_setter_nothing_is_replaced(monkeypatch):
    from ray._private import utils

    without(monkeypatch, "ray._private.utils", "set_sigterm_handler")
    with ray_session._ray_sigterm_handler_kept_back() as wanted:
        assert not hasattr(utils, "set_sigterm_handler")
    assert wanted == [] and not hasattr(utils, "set_sigterm_handler")


# ---- Ray's messages to the driver, handed over -------------------------------------------------

def test_rays_messages_go_to_the_handler_for_the_block_and_are_printed_without_its_printer(
        monkeypatch, capsys):
    from ray._private import worker

    real, said = worker.print_to_stdstream, []
    with ray_api.ray_messages_to(said.append):
        # as Ray's thread that receives them calls it (listen_error_messages)
        worker.print_to_stdstream({"lines": ["a raylet died"], "pid": "raylet", "is_err": False},
                                  ignore_prefix=False)
    assert said == ["a raylet died"] and capsys.readouterr().out == ""
    assert worker.print_to_stdstream is real
    without(monkeypatch, "ray._private.worker", "print_to_stdstream")
    with ray_api.ray_messages_to(said.append):
        assert not hasattr(worker, "print_to_stdstream")
