"""REACH's and RSDQL's training recipes: the fast ones exist, are what ``model=auto`` trains with,
and train; the rollout's sampler draws what the masked distribution draws; the reward scale
touches the value targets only. (How fast they train is studies.reach.train_speed's, not a test's.)"""

import pytest
import torch

from harness.families.reach.reach import Reach, sample_masked
from harness.families.reach.rsdql import Rsdql
from harness.policies import auto_recipe, build
from harness.policies.learned import training_config
from harness.rescheduler.evaluate import run_policy
from harness.rl.acting import save_model
from harness.sim.ceenv import Dynamics


@pytest.mark.parametrize("cls", [Reach, Rsdql])
def test_the_fast_recipe_is_what_auto_trains_and_it_trains(cls, tmp_path):
    assert auto_recipe(cls) == "fast"
    args, env = training_config(cls, ["--total-steps", "8192", "--learning-starts", "1024"] if cls is Rsdql
                                else ["--total-steps", "8192"], "fast")
    committed, _ = training_config(cls, [], "committed")
    assert args.num_envs > committed.num_envs  # its batch shapes are not Table V's
    dyn = Dynamics(_model(), env)
    net, curve = cls.train(dyn, args)
    assert curve[-1][0] == 8192
    path = tmp_path / f"{cls.name}.pt"
    save_model(net, cls.metadata(dyn, args, "chain", "p", "t", curve), path)
    assert run_policy(dyn, build(cls.name, model=str(path)), cls.name, 12, [0]) is not None


def test_the_rollout_samples_as_the_masked_categorical():
    from harness.rl.nets import masked_categorical

    logits, mask = torch.randn(256, 121), torch.rand(256, 121) > 0.7
    mask[:, -1] = True
    torch.manual_seed(4)
    dist = masked_categorical(logits, mask)
    want = dist.sample()
    torch.manual_seed(4)
    action, logp = sample_masked(logits, mask)
    assert torch.equal(action, want) and torch.equal(logp, dist.log_prob(want))
    assert mask.gather(1, action[:, None]).all()


def test_the_reward_scale_leaves_the_curve_in_ms():
    """The first rollout is the same policy's whatever the scale: its returns, in ms, are equal;
    the update that follows sees scaled value targets, so the weights differ."""
    dyn = Dynamics(_model(), training_config(Reach, [], "fast")[1])
    runs = [Reach.train(dyn, training_config(Reach, ["--total-steps", "4096", "--num-envs", "64",
                                                     "--reward-scale", s], "fast")[0]) for s in ("1", "0.1")]
    assert runs[0][1][0][1] == runs[1][1][0][1]
    assert not torch.equal(runs[0][0].actor[0].weight, runs[1][0].actor[0].weight)


def _model():
    from harness.sim.ceenv import default_model

    return default_model(None, None)
