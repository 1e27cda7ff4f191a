# One command runs the main job, one runs the tests; both install what they need first.
VENV   ?= .venv
PYTHON ?= python3
HARNESS = $(VENV)/bin/harness

.PHONY: setup demo test bench clean models rsdql-models rsdql-paper-models calibrated-model loaded-model

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt scripts/install-system-deps.sh
	./scripts/install-system-deps.sh
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]' -c constraints.txt
	touch $@

# The main job, the whole loop: build REACH's cloud-edge testbed; calibrate the simulator to it as
# it is now (about 3 minutes: the host's speed drifts, so a calibration is freshest just before
# the run); train REACH and RSDQL on that calibrated profile (reach[model=auto]: each policy's
# fast recipe, once per profile, kept in models/auto/ by the profile's hash and reused after);
# run the node-failure experiment (REACH §VII-D) with them and the default scheduler; print the
# comparison; write the HTML report (its Models section: which model each learned policy used
# and what it was trained on); take the testbed down again, also when a step fails.
demo: setup
	$(HARNESS) provision
	$(HARNESS) calibrate --app workloads/chain.json --out results \
	  && $(HARNESS) run node-failure --policy 'reach[model=auto],rsdql[model=auto],default' \
	    --profile results/chain.reach-local.calibrated.json --out results \
	  && $(HARNESS) report $$(ls -d results/*-node-failure | tail -1) --baseline default; \
	  rc=$$?; $(HARNESS) teardown; exit $$rc

# $(call each-reach-app,TRAIN COMMAND,POLICY): the command once per REACH app on its committed profile
each-reach-app = for app in chain aggregator-sequential aggregator-parallel; do \
	  $(1) --app workloads/$$app.json --profile profiles/$$app.reach-local.json --name $(2)-$$app || exit 1; done

# The committed REACH models, one per REACH app, as they were made (about 30 minutes here, one
# after the other). Table V plus entropy 0.01, half the episodes starting after a node failure,
# a quarter at the largest deployment; seed 2 was chosen among the seeds tried by
# `python -m studies.reach.quality --first-scenario 100` (scenarios other than the reported ones).
TRAIN = $(HARNESS) train --policy reach --recipe committed --seed 2 --out models --force
models: setup
	$(call each-reach-app,$(TRAIN),reach)
	$(VENV)/bin/python -m studies.reach.quality

# RSDQL, REACH's baseline, for the same three apps (models/rsdql-<app>.pt; 3-4 minutes each here);
# python -m studies.reach.vs_rsdql compares them with REACH's
TRAIN_RSDQL = $(HARNESS) train --policy rsdql --recipe committed --seed 2 --out models --force
rsdql-models: setup
	$(call each-reach-app,$(TRAIN_RSDQL),rsdql)

# RSDQL trained with Table V's DQN for 3 M steps and no action mask (in CEEnv it learns Idle), for
# studies.reach.vs_rsdql --rsdql-dir models/paper; 7-20 minutes each here
TRAIN_RSDQL_PAPER = $(HARNESS) train --policy rsdql --recipe paper --seed 2 --out models/paper --force
rsdql-paper-models: setup
	$(call each-reach-app,$(TRAIN_RSDQL_PAPER),rsdql)

# REACH on the calibrated simulator: Chain calibrated on the provisioned testbed as it is now
# (profiles/chain.reach-local.calibrated.json), then REACH trained on it with the fast recipe and
# the committed models' seed (models/calibrated/reach-chain.pt; about 3 minutes here, where the
# committed recipe took over 37). Needs `harness provision` first.
calibrated-model: setup
	$(HARNESS) calibrate --app workloads/chain.json
	$(HARNESS) train --policy reach --recipe fast --seed 2 --out models/calibrated --force \
	  --app workloads/chain.json --profile profiles/chain.reach-local.calibrated.json --name reach-chain

# REACH trained under load for traffic-surge (1-6 closed-loop users; models/loaded/reach-chain.pt;
# about 4 minutes here), then compared in simulation with the committed model and the default
# scheduler under 1, 3 and 6 users. Live: harness run traffic-surge --model-dir models/loaded
loaded-model: setup
	$(HARNESS) train --policy reach --recipe under-load --seed 2 --out models/loaded --force \
	  --app workloads/chain.json --profile profiles/chain.reach-local.json --name reach-chain
	-$(VENV)/bin/python -m studies.reach.under_load --loaded models/loaded/reach-chain.pt

# The whole test suite, slow and root tests included (see README).
test: setup
	$(VENV)/bin/python -m pytest

# Speed and cost only, each a ratio against a reference measured in the same run (the studies,
# paper reproductions included, are in studies/: see their READMEs). The last two provision the
# default testbed (root) and take it down again.
bench: setup
	$(VENV)/bin/python -m benchmarks.cli_startup
	$(VENV)/bin/python -m benchmarks.sim_speed --model models/reach-chain.pt
	$(VENV)/bin/python -m benchmarks.ceenv_speed
	$(VENV)/bin/python -m benchmarks.report_speed
	$(VENV)/bin/python -m benchmarks.cell_cost
	$(VENV)/bin/python -m benchmarks.injector_cost
	$(HARNESS) provision && $(VENV)/bin/python -m benchmarks.cpu_ratio; rc=$$?; $(HARNESS) teardown; exit $$rc

clean:
	-$(HARNESS) teardown
	rm -rf $(VENV) .harness
