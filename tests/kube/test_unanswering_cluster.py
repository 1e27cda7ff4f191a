"""Clusters that do not answer (issue 65, item 1): against real sockets on loopback — a listener
that accepts and never replies, a closed port — and kubeconfigs that are not kubeconfigs,
``harness --kubeconfig ... status`` ends within the request timeout with one error line and
status 2, never a hang or urllib3's traceback."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import pytest
import yaml

from harness.cli.main import main
from harness import errors
from harness.errors import UserError
from harness.testbed.kube import connect
from tests.kube.fake_apiserver import FakeApiServer


@contextmanager
def silent_server():
    """An 'API server' that accepts every connection and never sends a byte."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except (TimeoutError, OSError):
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for s in held + [listener]:
            s.close()


def closed_port() -> str:
    s = socket.create_server(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def kubeconfig(tmp_path, server: str):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server}}], "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return path


def status(tmp_path, path, capsys) -> tuple[int, list[str], float]:
    start = time.monotonic()
    rc = main(["--state-dir", str(tmp_path / ".harness"), "--kubeconfig", str(path), "status"])
    elapsed = time.monotonic() - start
    errors = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("harness: attaching:")]
    return rc, errors, elapsed


def test_a_server_that_accepts_and_never_answers_is_one_line_within_the_timeout(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(connect.ENV, "1.5")
    with silent_server() as url:
        rc, errors, elapsed = status(tmp_path, kubeconfig(tmp_path, url), capsys)
    assert rc == 2 and len(errors) == 1, errors
    assert f"the API server {url} did not answer within 1.5 s" in errors[0] and str(tmp_path) in errors[0]
    assert elapsed < 1.5 + 4  # one read timeout (never retried), and the start-up


def test_a_refused_port_is_one_line(tmp_path, capsys):
    url = closed_port()
    rc, errors, elapsed = status(tmp_path, kubeconfig(tmp_path, url), capsys)
    assert rc == 2 and errors == [f"harness: error: {tmp_path / 'kubeconfig'}: cannot connect to the API server "
                                  f"{url}: Connection refused"]
    assert elapsed < 5


@pytest.mark.parametrize("text, expected", [
    ("clusters: [unclosed\n  : :\n", "not YAML (line 2, column 3): expected ',' or ']', but got ':'"),
    ("just a string\n", "expected a kubeconfig (a mapping with clusters, contexts and users), got a string"),
    ("- a\n- b\n", "got a list"),
    ("", "got an empty file"),
    ("clusters: 7\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", "not a kubeconfig"),
])
def test_a_malformed_kubeconfig_is_one_line(tmp_path, capsys, text, expected):
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    rc, errors, _ = status(tmp_path, path, capsys)
    assert rc == 2 and len(errors) == 1 and errors[0].startswith(f"harness: error: {path}: "), errors
    assert expected in errors[0]


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1,2,3", "soon"])
def test_a_bad_timeout_setting_is_one_line(monkeypatch, value):
    monkeypatch.setenv(connect.ENV, value)
    with pytest.raises(UserError, match=connect.ENV):
        connect.timeouts()


def test_every_call_has_connect_and_read_timeouts(tmp_path, monkeypatch):
    monkeypatch.setenv(connect.ENV, "2,7")
    api = connect.kubeconfig_client(kubeconfig(tmp_path, closed_port()), error=errors.TestbedError)
    seen = {}
    real = api.rest_client.pool_manager.request

    def spy(method, url, **kw):
        seen["timeout"] = kw["timeout"]
        return real(method, url, **kw)

    api.rest_client.pool_manager.request = spy
    from kubernetes import client

    with pytest.raises(errors.TestbedError, match="cannot connect"):  # a testbed harness built: exit 1, as before
        client.CoreV1Api(api).list_node()
    assert (seen["timeout"].connect_timeout, seen["timeout"].read_timeout) == (2, 7)


def test_a_cluster_that_answers_is_read_as_before_under_the_timeout(monkeypatch, tmp_path):
    monkeypatch.setenv(connect.ENV, "1")
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {}},
              "status": {"allocatable": {"cpu": "2", "memory": "2Gi"}}}]
    with FakeApiServer(nodes) as server:
        from kubernetes import client

        api = connect.kubeconfig_client(kubeconfig(tmp_path, server.url))
        assert [n.metadata.name for n in client.CoreV1Api(api).list_node().items] == ["n1"]
