"""A policy named with its arguments (``rollout[base=default]``) wherever policies are named: run,
evaluate, the leaderboard; two settings of one policy side by side; a wrong argument is one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.errors import UserError
from harness.policies import build_for_app, build_ref, label, parse_ref, split_refs
from tests.conftest import REPO


def test_refs_split_on_commas_outside_brackets_and_parse_their_arguments():
    assert split_refs("reach, rollout[base=default,beta=0.9],kubedsm") == ["reach", "rollout[base=default,beta=0.9]",
                                                                           "kubedsm"]
    assert parse_ref("rollout[base=default, beta=0.9]") == ("rollout", {"base": "default", "beta": "0.9"})
    assert parse_ref("pkg.mod:Cls") == ("pkg.mod:Cls", {})
    with pytest.raises(UserError, match="unbalanced"):
        split_refs("rollout[base=default")


def test_arguments_are_typed_by_the_policys_args_and_label_the_policy():
    p = build_ref("kubedsm[variant=noedgemig,batch=20]")
    assert p.args.variant == "noedgemig" and p.args.batch == 20 and isinstance(p.args.batch, int)
    assert label("kubedsm[variant=noedgemig,batch=20]", p) == "kubedsm[variant=noedgemig,batch=20]"
    assert label("kubedsm", build_ref("kubedsm")) == "kubedsm"
    with pytest.raises(UserError, match="did you mean variant"):
        build_ref("kubedsm[varient=noedgemig]")
    with pytest.raises(UserError, match="batch"):
        build_ref("kubedsm[batch=many]")


def test_a_learned_policy_takes_a_model_given_as_an_argument(tmp_path):
    other = REPO / "models/reach-chain.pt"
    p = build_for_app(f"reach[model={other}]", "no-such-app", "x.json", "y.json", tmp_path)
    assert p.model_file == str(other)


def test_two_settings_of_one_policy_play_side_by_side_in_evaluate(tmp_path):
    r = subprocess.run([sys.executable, "-m", "harness", "evaluate", "steady", "--policy",
                        "rollout,rollout[base=default]", "--seeds", "1", "--out", str(tmp_path)],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    policies = {json.loads(f.read_text())["policy"] for f in tmp_path.glob("*/*/summary.json")}
    assert policies == {"rollout", "rollout[base=default]"}
