"""tuner.store.checkpoint: version 2 checkpoints carry a SHA-256, so damage is refused before unpickling;
version 1 checkpoints (a bare pickle) still load."""

from __future__ import annotations

import pickle
import re
import shutil
from pathlib import Path

import pytest

from tuner.cli.main import main
from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt
from tuner.store.checkpoint import Candidate, RunState

# A run directory made by tune2048 before checkpoints had a header: checkpoint.pkl is the
# bare-pickle (version 1) checkpoint of tests/data/bad/run-no-config, config.yaml the matching
# config of the same generation-0 run of configs/quick.yaml.
V1_RUN = Path(__file__).resolve().parents[2] / "data" / "checkpoint-v1"


def a_state() -> RunState:
    config = {"run": {"name": "ckpt", "output_dir": "runs", "seed": 7}, "family": "classic"}
    elite = Candidate(x=[0.25, -1.5], weights={"a": 2.0, "b": 0.5}, fitness=1234.5, stderr=12.0,
                      games=32, generation=2)
    history = [{"generation": g, "best": 1000.0 + g, "sigma": 0.3 / (g + 1)} for g in range(3)]
    return RunState(config=config, generation=3, strategy=bytes(range(64)), history=history,
                    elites=[elite], games=96, evaluations=12, seconds=4.5)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A run directory holding a_state's config and version 2 checkpoint."""
    ckpt.write_config(tmp_path, a_state().config)
    ckpt.save_state(tmp_path, a_state())
    return tmp_path


def test_a_checkpoint_round_trips_with_a_checksum_header(run_dir):
    raw = (run_dir / ckpt.CHECKPOINT_FILE).read_bytes()
    assert raw.startswith(b"tune2048-checkpoint 2 sha256=")
    assert ckpt.CHECKPOINT_VERSION == 2
    assert ckpt.load_state(run_dir) == a_state()


def flip(raw: bytes, bit: int) -> bytes:
    damaged = bytearray(raw)
    damaged[bit // 8] ^= 1 << (bit % 8)
    return bytes(damaged)


def test_every_single_bit_flip_in_the_payload_is_refused_by_its_checksum(run_dir):
    """Decoded in memory, as load_state decodes what it read (tens of thousands of flips: a
    file written for each would take seconds of the disk's time); one through the file."""
    path = run_dir / ckpt.CHECKPOINT_FILE
    raw = path.read_bytes()
    header_bits = 8 * (raw.index(b"\n") + 1)
    for bit in range(header_bits, 8 * len(raw)):
        with pytest.raises(CheckpointError, match="checksum mismatch") as info:
            ckpt.decode_state(flip(raw, bit), path)
        assert str(info.value).startswith(f"{path}: truncated or corrupt checkpoint")
    path.write_bytes(flip(raw, 8 * len(raw) - 1))
    with pytest.raises(CheckpointError, match="checksum mismatch"):
        ckpt.load_state(run_dir)


def test_every_single_bit_flip_in_the_header_is_refused(run_dir):
    path = run_dir / ckpt.CHECKPOINT_FILE
    raw = path.read_bytes()
    for bit in range(8 * (raw.index(b"\n") + 1)):
        path.write_bytes(flip(raw, bit))
        with pytest.raises(CheckpointError) as info:
            ckpt.load_state(run_dir)
        assert str(info.value).startswith(f"{path}: ")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda raw: raw[:40], "truncated or corrupt checkpoint (damaged header line)"),
        (lambda raw: raw.replace(b"\n", b" ", 1), "(damaged header line)"),
        (lambda raw: raw.replace(b"sha256=", b"sha512=", 1), "(damaged header line)"),
        (lambda raw: raw[:30] + raw[30:94].upper() + raw[94:], "(damaged header line)"),
        (lambda raw: raw[:raw.index(b"\n") + 1], "(checksum mismatch)"),  # no payload
        (lambda raw: raw[:len(raw) // 2], "(checksum mismatch)"),
        (lambda raw: raw.replace(b" 2 ", b" 99 ", 1),
         "checkpoint format version 99; this tune2048 reads versions 1 and 2"),
        (lambda raw: b"tune2048-checkpoints 2" + raw[21:], "not a tune2048 checkpoint"),
        (lambda raw: b"", "not a tune2048 checkpoint"),
        (lambda raw: b"run:\n  name: quick\n", "not a tune2048 checkpoint"),
    ],
)
def test_a_damaged_or_foreign_header_is_refused_cleanly(run_dir, damage, message):
    path = run_dir / ckpt.CHECKPOINT_FILE
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(CheckpointError, match=f"^{re.escape(str(path))}: ") as info:
        ckpt.load_state(run_dir)
    assert message in str(info.value)


def test_a_cut_at_any_length_is_refused(run_dir):
    path = run_dir / ckpt.CHECKPOINT_FILE
    raw = path.read_bytes()
    for length in range(0, len(raw), 7):
        path.write_bytes(raw[:length])
        with pytest.raises(CheckpointError):
            ckpt.load_state(run_dir)


def test_the_cli_prints_a_corrupt_checkpoint_as_one_line_and_exits_2(run_dir, capsys):
    path = run_dir / ckpt.CHECKPOINT_FILE
    raw = path.read_bytes()
    path.write_bytes(flip(raw, 8 * len(raw) - 3))
    assert main(["--resume", str(run_dir)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.splitlines()
    assert line.startswith(f"tune: error: {path}: truncated or corrupt checkpoint (checksum mismatch)")


def write_v1(run_dir: Path, payload: dict) -> None:
    """A checkpoint as tune2048 wrote it before version 2: a bare pickle of the payload."""
    (run_dir / ckpt.CHECKPOINT_FILE).write_bytes(pickle.dumps(payload))


def test_a_version_1_checkpoint_still_loads(run_dir):
    write_v1(run_dir, {"format": "tune2048-checkpoint", "version": 1, "state": a_state()})
    assert ckpt.load_state(run_dir) == a_state()


def test_a_version_1_run_directory_written_by_the_old_tune2048_still_loads(tmp_path):
    run_dir = tmp_path / "quick"
    shutil.copytree(V1_RUN, run_dir)
    assert (run_dir / ckpt.CHECKPOINT_FILE).read_bytes().startswith(b"\x80")  # no header
    state = ckpt.load_state(run_dir)
    assert state.generation == 0 and state.config["run"]["name"] == "quick"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"format": "tune2048-checkpoint", "version": 99, "state": None},
         "checkpoint format version 99; this tune2048 reads versions 1 and 2"),
        ({"format": "something-else", "version": 1}, "not a tune2048 checkpoint"),
        ([1, 2, 3], "not a tune2048 checkpoint"),
        ({"format": "tune2048-checkpoint", "version": 1, "state": "not a state"},
         "checkpoint holds no run state"),
    ],
)
def test_a_bad_version_1_checkpoint_is_refused(run_dir, payload, message):
    write_v1(run_dir, payload)
    with pytest.raises(CheckpointError, match=f"^{re.escape(str(run_dir / ckpt.CHECKPOINT_FILE))}: ") as info:
        ckpt.load_state(run_dir)
    assert message in str(info.value)


def test_a_truncated_version_1_checkpoint_is_refused(run_dir):
    write_v1(run_dir, {"format": "tune2048-checkpoint", "version": 1, "state": a_state()})
    path = run_dir / ckpt.CHECKPOINT_FILE
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(CheckpointError, match="truncated or corrupt checkpoint"):
        ckpt.load_state(run_dir)
