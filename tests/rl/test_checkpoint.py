"""Training states are data: saved without pickled code, read with ``weights_only``, and every
file that is not one harness wrote is one line naming it."""

import pickle

import numpy as np
import pytest
import torch

from harness.errors import UserError
from harness.families.silgpo.agent import Curve, HighReturnBuffer, RewardScaling
from harness.rl import checkpoint


def test_a_state_of_arrays_and_plain_objects_comes_back_equal(tmp_path):
    buf = HighReturnBuffer(4, 0.9)
    buf.items.append(({"vector": np.arange(3.0), "edges": [np.array([[0, 1], [1, 0]])]}, np.array([True, False]), 1, 2.5))
    scaling = RewardScaling(0.9)
    scaling(3.0)
    state = {"sil": buf, "scaling": scaling, "curve": Curve([10], [24.7], [False]), "pair": (1, np.float64(2.0)),
             "rng": np.random.default_rng(1).bit_generator.state, "w": torch.ones(2)}
    checkpoint.save(tmp_path / "s.ckpt", {"args": {"hac": (5, 6, 7)}}, state)
    back = checkpoint.load(tmp_path / "s.ckpt", {"args": {"hac": (5, 6, 7)}}, "--resume")
    assert isinstance(back["sil"], HighReturnBuffer) and back["sil"].gamma == 0.9
    obs, mask, a, ret = back["sil"].items[0]
    np.testing.assert_array_equal(obs["vector"], np.arange(3.0))
    assert obs["edges"][0].dtype == np.int64 and mask.dtype == bool and (a, ret) == (1, 2.5)
    assert back["scaling"].n == 1 and back["curve"].delay == [24.7] and back["pair"] == (1, 2.0)
    assert back["rng"] == state["rng"] and torch.equal(back["w"], torch.ones(2))


def test_a_state_saved_before_a_field_was_added_comes_back_with_its_default(tmp_path):
    """A training resumed from a state saved before the curve recorded unstable queues goes on
    recording them; the evaluations before have none (None in its rows, blank in its CSV)."""
    checkpoint.save(tmp_path / "s.ckpt", {}, {"curve": Curve([10], [24.7], [False], [1])})
    raw = torch.load(tmp_path / "s.ckpt", weights_only=True)
    del raw["state"]["curve"]["fields"]["unstable"]  # as a state saved by the older code holds it
    torch.save(raw, tmp_path / "s.ckpt")
    curve = checkpoint.load(tmp_path / "s.ckpt", {}, "--resume")["curve"]
    assert curve.unstable == []
    curve.episodes.append(20), curve.delay.append(23.0), curve.sil_on.append(True), curve.unstable.append(2)
    assert curve.rows() == [(10, 24.7, False, None), (20, 23.0, True, 2)] and curve.unstable_at(20) == 2


def test_an_object_not_declared_plain_is_refused_when_saving(tmp_path):
    with pytest.raises(TypeError, match="cannot hold"):
        checkpoint.save(tmp_path / "s.ckpt", {}, {"x": object()})


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


@pytest.mark.parametrize("content", ["corrupt", "truncated", "foreign"])
def test_a_file_that_is_not_a_training_state_is_one_line(tmp_path, content, capsys):
    path = tmp_path / "s.ckpt"
    checkpoint.save(path, {}, {"w": torch.ones(1000)})
    data = path.read_bytes()
    path.write_bytes({"corrupt": b"not a checkpoint at all", "truncated": data[: len(data) // 2],
                      "foreign": pickle.dumps(Evil())}[content])
    with pytest.raises(UserError) as err:
        checkpoint.load(path, {}, "--resume")
    assert "not a training state" in str(err.value) and "\n" not in str(err.value)
    assert "pwned" not in capsys.readouterr().out  # nothing in the file ran


def test_a_failed_write_keeps_the_previous_state_and_no_part_file(tmp_path, monkeypatch):
    path = tmp_path / "s.ckpt"
    checkpoint.save(path, {}, {"episode": 1})

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(torch, "save", full)
    with pytest.raises(UserError, match="No space left"):
        checkpoint.save(path, {}, {"episode": 2})
    assert not path.with_suffix(".ckpt.part").exists()
    assert checkpoint.load(path, {}, "--resume")["episode"] == 1
