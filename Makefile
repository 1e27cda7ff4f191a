# One command runs the main job, one runs the tests; both install what they need first.
VENV   ?= .venv
PYTHON ?= python3
HARNESS = $(VENV)/bin/harness

.PHONY: setup demo test bench clean models

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/install-system-deps.sh
	./scripts/install-system-deps.sh
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $@

# The main job: build REACH's cloud-edge testbed, run the node-failure experiment (REACH
# §VII-D) with the committed REACH model and the default scheduler, print the comparison, write
# the HTML report, take the testbed down again (also when a step fails). The profile and the
# model are committed (profiles/, models/); 'make models' retrains the model.
demo: setup
	$(HARNESS) provision
	$(HARNESS) run node-failure --policy reach,default --out results \
	  && $(HARNESS) report $$(ls -d results/*-node-failure | tail -1) --baseline default; \
	  rc=$$?; $(HARNESS) teardown; exit $$rc

# The committed REACH model for Chain, as it was made (about 2 minutes here).
models: setup
	$(HARNESS) train --app workloads/chain.json --profile profiles/chain.reach-local.json --policy reach \
	  --steps 400000 --seed 1 --ent-coef 0.01 --failed-at-start 0.5 --out models

# The whole test suite, slow and root tests included (see README).
test: setup
	$(VENV)/bin/python -m pytest

bench: setup
	$(VENV)/bin/python benchmarks/cli_startup.py
	$(VENV)/bin/python benchmarks/injector_cost.py
	$(VENV)/bin/python benchmarks/cell_cost.py
	$(VENV)/bin/python benchmarks/sim_speed.py --model models/reach-chain.pt
	$(VENV)/bin/python benchmarks/report_speed.py
	$(HARNESS) provision && $(VENV)/bin/python benchmarks/cpu_ratio.py; $(HARNESS) teardown

clean:
	-$(HARNESS) teardown
	rm -rf $(VENV) .harness
