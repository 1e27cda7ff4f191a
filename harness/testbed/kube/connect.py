"""Every Kubernetes API client harness builds: a kubeconfig read as one line per mistake, and a
request timeout on every call, as kubectl's ``--request-timeout`` and client-go's dial timeout do.

An API server that cannot be reached or does not answer is one line naming where the server came
from, never a hang or urllib3's traceback. Each call connects within ``connect`` seconds (tried
three times: a server restarting is not a failure) and gets its answer within ``read`` seconds
(never sent again: the server may have acted on it); ``HARNESS_KUBE_TIMEOUT`` changes both,
``SECONDS`` (connect within min(SECONDS, 5)) or ``CONNECT,READ``. So a call ends within
3 x connect + read seconds: 45 s by default, 30 s against a server that accepts and stays silent.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import urllib3
import yaml
from kubernetes import client, config
from kubernetes.client import rest
from kubernetes.config.config_exception import ConfigException

from harness.errors import UserError

CONNECT_S = 5.0
READ_S = 30.0
CONNECT_TRIES = 3
ENV = "HARNESS_KUBE_TIMEOUT"
_KINDS = {str: "a string", list: "a list", int: "a number", float: "a number", bool: "a boolean"}


def timeouts() -> tuple[float, float]:
    """(connect, read) in seconds: the defaults, or ``$HARNESS_KUBE_TIMEOUT``."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return CONNECT_S, READ_S
    try:
        parts = [float(p) for p in raw.split(",")]
    except ValueError:
        parts = []
    if len(parts) not in (1, 2) or not all(math.isfinite(p) and p > 0 for p in parts):
        raise UserError(f"expected SECONDS or CONNECT,READ (positive numbers), got {raw!r}", source="environment",
                        field=ENV)
    return (min(parts[0], CONNECT_S), parts[0]) if len(parts) == 1 else (parts[0], parts[1])


class _TimedRest(rest.RESTClientObject):
    """The REST layer with a timeout on every request and the failures to reach the server as
    one line (``error``)."""

    def __init__(self, configuration, error) -> None:
        super().__init__(configuration)
        self.connect_s, self.read_s = timeouts()
        self.error = error

    def _unreachable(self, exc: Exception) -> Exception:
        reason = getattr(exc, "reason", None) or exc
        host = self.configuration.host
        wait = f" ({ENV}=SECONDS to wait longer)"
        if isinstance(reason, urllib3.exceptions.NewConnectionError):  # before its base, ConnectTimeoutError
            cause = str(reason).rsplit("] ", 1)[-1].rstrip(")")  # "... [Errno 111] Connection refused"
            text, wait = f"cannot connect to the API server {host}: {cause}", ""
        elif isinstance(reason, urllib3.exceptions.ReadTimeoutError):
            text = f"the API server {host} did not answer within {self.read_s:g} s"
        elif isinstance(reason, urllib3.exceptions.ConnectTimeoutError):
            text = f"no connection to the API server {host} within {self.connect_s:g} s"
        else:
            text, wait = f"the API server {host} cannot be reached: {type(reason).__name__}: {reason}", ""
        return self.error(text + wait)

    def request(self, method, url, headers=None, body=None, post_params=None, _request_timeout=None):
        try:
            response = super().request(method, url, headers=headers, body=body, post_params=post_params,
                                       _request_timeout=_request_timeout or (self.connect_s, self.read_s))
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._unreachable(exc) from None
        read = response.read

        def read_guarded():  # the body, read later by the caller, under the same timeout
            try:
                return read()
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise self._unreachable(exc) from None

        response.read = read_guarded
        return response


def timed_client(configuration: client.Configuration, error=UserError) -> client.ApiClient:
    """An ApiClient whose every call has a connect and a read timeout, and whose failures to reach
    the server raise ``error(text)`` (a UserError: one line and exit status 2; a testbed harness
    built gives TestbedError)."""
    configuration.retries = urllib3.Retry(total=CONNECT_TRIES - 1, connect=CONNECT_TRIES - 1, read=0, status=0,
                                          other=0, redirect=3, backoff_factor=0.2, raise_on_status=False)
    api = client.ApiClient(configuration=configuration)
    api.rest_client = _TimedRest(configuration, error)
    return api


def kubeconfig_client(path: str | Path, context: str | None = None, error=None) -> client.ApiClient:
    """The client kubectl would build from this kubeconfig and context (else its current one);
    a file that is not a kubeconfig, or an unknown context, is one line naming the file."""
    path = str(Path(path).expanduser())
    if not Path(path).is_file():
        raise UserError("kubeconfig not found", source=path, field="--kubeconfig")
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read it: {exc}", source=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise UserError(f"not YAML{where}: {getattr(exc, 'problem', None) or exc}", source=path) from None
    if not isinstance(doc, dict):
        raise UserError(f"expected a kubeconfig (a mapping with clusters, contexts and users), got "
                        f"{_KINDS.get(type(doc), type(doc).__name__) if doc is not None else 'an empty file'}", source=path) from None
    cfg = client.Configuration()
    try:
        config.load_kube_config(config_file=path, context=context, client_configuration=cfg,
                                persist_config=False)
    except ConfigException as exc:
        contexts = ""
        try:
            contexts = ", ".join(c["name"] for c in config.list_kube_config_contexts(path)[0])
        except (ConfigException, TypeError, KeyError, AttributeError, ValueError):
            pass
        raise UserError(f"{exc}" + (f" (contexts: {contexts})" if contexts else ""), source=path,
                        field="--context" if context else "current-context") from None
    except (TypeError, KeyError, AttributeError, ValueError, IndexError) as exc:
        raise UserError(f"not a kubeconfig Kubernetes' client can read: {type(exc).__name__}: {exc}",
                        source=path) from None
    return timed_client(cfg, error or (lambda text: UserError(text, source=path)))
