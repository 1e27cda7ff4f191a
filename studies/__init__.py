"""The lab wing: harness's reproductions of the seed papers and its studies of the simulator.

One folder per study, each with its scripts (run as ``python -m studies.<study>.<script>`` from
the repository root) and a README.md of its findings. harness never imports this package
(pyproject.toml's import-linter contract); a study finds apps, profiles and models through
``studies.common``, which asks harness (``harness.shipped``).
"""
