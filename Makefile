# One command runs the main job, one runs the tests; both install what they need first.
VENV   ?= .venv
PYTHON ?= python3
HARNESS = $(VENV)/bin/harness

.PHONY: setup demo test bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/install-system-deps.sh
	./scripts/install-system-deps.sh
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $@

# The main job, so far: build REACH's cloud-edge testbed (provision prints its status), deploy
# the Chain app across cloud and edge, profile it, take everything down again.
demo: setup
	$(HARNESS) provision
	$(HARNESS) deploy workloads/chain.json
	$(HARNESS) undeploy
	$(HARNESS) profile workloads/chain.json --requests 10 --out .harness/profiles
	$(HARNESS) teardown

# The whole test suite, slow and root tests included (see README).
test: setup
	$(VENV)/bin/python -m pytest

bench: setup
	$(VENV)/bin/python benchmarks/cli_startup.py
	$(VENV)/bin/python benchmarks/injector_cost.py
	$(VENV)/bin/python benchmarks/cell_cost.py
	$(HARNESS) provision && $(VENV)/bin/python benchmarks/cpu_ratio.py; $(HARNESS) teardown

clean:
	-$(HARNESS) teardown
	rm -rf $(VENV) .harness
