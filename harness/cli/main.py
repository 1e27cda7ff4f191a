"""The ``harness`` command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from harness import __version__
from harness.errors import OutputError, PolicyError, TestbedError, UserError

INTERRUPTED = 130

app = typer.Typer(
    name="harness",
    help="Benchmark microservice placement and rescheduling policies on a real cloud-edge testbed.\n\n"
    "Typical session: provision -> status -> ... -> teardown.",
    no_args_is_help=True,
    add_completion=True,  # typer's own: harness --install-completion [bash|zsh|fish], --show-completion
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        print(f"harness {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    state_dir: Path = typer.Option(
        None, "--state-dir", envvar="HARNESS_STATE_DIR",
        help="Where the testbed state lives (testbed.yaml, daemons' pidfiles, Ansible artifacts). Default: ./.harness, "
             "or, when it holds no testbed, the folder of the last testbed provisioned"),
    kubeconfig: Optional[Path] = typer.Option(
        None, "--kubeconfig", help="Use a Kubernetes cluster harness did not build, as kubectl would (this file; "
        "else $KUBECONFIG or ~/.kube/config when --context is given): nothing is provisioned; the first command "
        "attaches to it (nodes read, RTTs measured) and later ones use it (docs/own-cluster.md)."),
    context: Optional[str] = typer.Option(None, "--context", help="The kubeconfig's context (default: its current one)."),
    cluster_map: Optional[Path] = typer.Option(
        None, "--cluster-map", help="YAML: which node labels give type, site and tier, speeds and costs, namespace, "
        "image (default: the well-known labels; docs/own-cluster.md)."),
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    if ctx.invoked_subcommand in NEEDS_THE_TESTBED and not _ASKS_HELP.intersection(_ARGV):
        _check_testbed_extra()  # a command's --help needs no extra: it only reads
    if state_dir is None and ctx.invoked_subcommand in ON_A_TESTBED:
        from harness.spec.testbed_state import default_state_dir

        state_dir, elsewhere = default_state_dir()
        if elsewhere:
            print(f"harness: the testbed provisioned last, in {state_dir} (--state-dir to choose another)", file=sys.stderr)
    ctx.obj = {"state_dir": state_dir or Path(".harness")}
    if (kubeconfig or context or cluster_map) and ctx.invoked_subcommand in ON_A_TESTBED - {"teardown"}:
        _attach(ctx.obj["state_dir"], kubeconfig, context, cluster_map)


def _attach(state_dir: Path, kubeconfig: Path | None, context: str | None, cluster_map: Path | None) -> None:
    from harness.spec.cluster_map import load_cluster_map
    from harness.spec.testbed_state import remember_state_dir
    from harness.testbed.kube.existing import attach
    from harness.testbed.lock import exclusive

    cmap = load_cluster_map(cluster_map)
    with exclusive(state_dir):
        attach(state_dir, str(kubeconfig) if kubeconfig else None, context, cmap, str(cluster_map or "--cluster-map"),
               on_step=lambda text: print(f"harness: attaching: {text}", file=sys.stderr))
    remember_state_dir(state_dir)


# the testbed extra's modules (pyproject.toml): a command that needs one says which extra to install
TESTBED_MODULES = {"ansible", "ansible_runner", "fnfqueue", "kubernetes", "locust", "prometheus_api_client",
                   "prometheus_client", "aiohttp"}

# the commands that build or use a testbed: without the testbed extra, one line before anything starts
NEEDS_THE_TESTBED = {"provision", "status", "deploy", "undeploy", "run", "profile", "calibrate", "reschedule"}


def _check_testbed_extra() -> None:
    import importlib.util

    def absent(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is None
        except ModuleNotFoundError:  # a finder that refuses it outright
            return True

    missing = sorted(m for m in TESTBED_MODULES if absent(m))
    if missing:
        raise UserError(f"this command needs the testbed: pip install 'harness-bench[testbed]' (missing: "
                        f"{', '.join(missing)})")


# the commands that act on a testbed already provisioned: from another folder they find the last one
ON_A_TESTBED = {"status", "teardown", "deploy", "undeploy", "run", "profile", "calibrate", "reschedule"}


def _register() -> None:
    # each module registers its command(s) on `app`; imported in the order of a session, which --help follows
    import importlib

    for name in ("provision", "status", "teardown", "validate", "generate", "deploy", "profile", "predict", "calibrate",
                 "train", "evaluate", "sweep", "scenarios", "policies", "run", "leaderboard", "report", "reschedule"):
        importlib.import_module(f"harness.cli.{name}")


_ASKS_HELP = {"--help", "-h"}
_ARGV: list[str] = []  # this invocation's arguments, for the root callback


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every known failure becomes one line on stderr and an exit status."""
    from harness.interrupts import polite_signals

    _ARGV[:] = sys.argv[1:] if argv is None else list(argv)
    _register()
    polite_signals()  # SIGTERM and SIGHUP take Ctrl-C's path: the run stops cleanly, with its partial summary
    try:
        rc = app(args=argv, standalone_mode=False)
    except UserError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return 2
    except TestbedError as exc:
        print(f"harness: testbed error: {exc}", file=sys.stderr)
        return 1
    except OutputError as exc:
        print(f"harness: error: cannot write results: {exc}", file=sys.stderr)
        return 1
    except PolicyError as exc:
        print(f"harness: policy error: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in TESTBED_MODULES:
            raise
        print(f"harness: error: this command needs the testbed: pip install 'harness-bench[testbed]' (no module "
              f"{exc.name!r})", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, typer.Abort):
        return _interrupted()
    except typer.Exit as exc:
        return exc.exit_code
    except typer.TyperException as exc:  # usage errors of the (vendored) click layer
        show = getattr(exc, "show", None)
        if show:
            show()
        return getattr(exc, "exit_code", 2)
    if rc == INTERRUPTED:  # typer turns Ctrl-C into a bare 130 when not standalone
        return _interrupted()
    return rc if isinstance(rc, int) else 0


def _interrupted() -> int:
    print("harness: interrupted; 'harness teardown' removes whatever was left", file=sys.stderr)
    return INTERRUPTED


def warn_app(app_spec, source) -> None:
    """What validation found that μBench accepts but harness does not act on: one line each."""
    for line in app_spec.warnings:
        print(f"harness: warning: {source}: {line}", file=sys.stderr)
