"""The profile format's later fields (``rtt_sd_ms``, ``lifecycle``): optional, checked like the rest,
and left out of a profile that has none, so such a profile reads, writes and hashes as before."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.policies.provenance import digest
from harness.spec.profile import PodLifecycle, load_profile
from tests.conftest import REPO

PROFILES = sorted((REPO / "profiles").glob("*.json"))


@pytest.mark.parametrize("path", PROFILES[:4], ids=lambda p: p.name)
def test_a_profile_without_the_new_fields_is_written_as_it_was(path):
    profile = load_profile(path)
    assert profile.rtt_sd_ms == {} and profile.lifecycle == {}
    assert set(json.loads(profile.model_dump_json())) <= set(json.loads(path.read_text())) | {"calibration"}
    kept = profile.model_copy(update={"lifecycle": {"t": PodLifecycle(ready_s=1.0, samples=1)},
                                      "rtt_sd_ms": {"a": {"b": 1.0}}})
    assert {"lifecycle", "rtt_sd_ms"} <= set(json.loads(kept.model_dump_json()))
    assert digest(kept) != digest(profile)  # what a model was trained on tells the two apart


@pytest.mark.parametrize("field, value, said", [
    ("lifecycle", {"cloud-a": {"ready_s": -1, "samples": 3}}, "lifecycle.cloud-a.ready_s: must be ≥ 0"),
    ("lifecycle", {"cloud-a": {"ready_s": 1, "samples": 3, "start": 2}}, "lifecycle.cloud-a.start"),
    ("rtt_sd_ms", {"cloud-a-1": {"edge-a-1": -2.0}}, "rtt_sd_ms.cloud-a-1.edge-a-1: expected a finite number ≥ 0"),
])
def test_a_bad_new_field_is_one_line_naming_it(tmp_path, field, value, said):
    p = json.loads((REPO / "profiles/chain.reach-local.json").read_text())
    p[field] = value
    bad = tmp_path / "chain.bad.json"
    bad.write_text(json.dumps(p))
    r = subprocess.run([sys.executable, "-m", "harness", "validate", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and said in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
