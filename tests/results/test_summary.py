"""Run summaries from a request log."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.results.summary import errors_outside, mean_rows, summarize


def log(rows):
    return pd.DataFrame(rows, columns=["t_send", "latency_ms", "status", "bytes", "error", "pod"])


def test_latency_stats_over_successes_after_warmup():
    rng = np.random.default_rng(0)
    lat = rng.uniform(100, 400, 200)
    rows = [(100 + i * 0.25, lat[i], 200, 10, "", "p") for i in range(200)]
    rows[50] = (100 + 50 * 0.25, 9999.0, 0, 0, "ConnectionError", "")
    df = log(rows)
    s = summarize(df, t_start=100, t_end=150, warmup_s=5, threshold_ms=250)
    kept = [r for r in rows if r[0] >= 105]
    ok = np.array([r[1] for r in kept if r[2] == 200])
    assert s["requests"] == len(kept) and s["errors"] == 1
    assert abs(s["mean_ms"] - ok.mean()) < 1e-3 and abs(s["p95_ms"] - np.percentile(ok, 95)) < 1e-3
    assert abs(s["under_threshold"] - (ok < 250).sum() / len(kept)) < 1e-4
    assert abs(s["rps"] - len(ok) / 45) < 1e-3


def test_errors_right_after_a_fault_are_not_steady_state():
    df = log([(10, 1, 0, 0, "x", ""), (30, 1, 0, 0, "x", ""), (31, 5, 200, 1, "", "p")])
    events = [{"t": 29.5, "kind": "node-failure"}]
    assert errors_outside(df, events, t_start=0, t_end=100, warmup_s=5) == 1  # the one at 10 s


def test_mean_rows_only_for_policies_of_several_seeds():
    rows = [{"policy": "a", "seed": 0, "mean_ms": 10.0}, {"policy": "a", "seed": 1, "mean_ms": 20.0},
            {"policy": "b", "seed": 0, "mean_ms": 5.0}]
    m = mean_rows(rows)
    assert len(m) == 1 and m[0]["policy"] == "a" and m[0]["seed"] == "mean" and m[0]["mean_ms"] == 15.0


def test_the_comparison_names_each_run_by_its_seed(tmp_path):
    from harness.results.summary import write_comparison

    rows = [{"policy": "a", "seed": 4, "mean_ms": 10.0}, {"policy": "a", "seed": 5, "mean_ms": 20.0}]
    md = write_comparison(rows, tmp_path / "comparison")
    head, *body = (tmp_path / "comparison.csv").read_text().splitlines()
    assert head.startswith("policy,seed,mean_ms") and "repeat" not in head
    assert [line.split(",")[:2] for line in body] == [["a", "4"], ["a", "5"]]
    assert "| a | mean | 15.0 |" in md


def test_the_loads_logs_merge_into_one_requests_csv(tmp_path):
    from harness.results.rundir import merge_request_logs
    from harness.results.summary import read_requests

    head = "t_send,latency_ms,status,bytes,error,pod,entry\n"
    (tmp_path / "requests.csv").write_text(head + "10.0,5,200,1,,a-1,a\n12.0,5,200,1,,a-1,a\n")
    (tmp_path / "requests.1.csv").write_text(head + "11.0,7,200,1,,b-1,b\n13.0,7,0,0,Timeout,,b\n")
    assert len(read_requests(tmp_path)) == 4  # read together while the run goes
    merge_request_logs(tmp_path)
    assert not (tmp_path / "requests.1.csv").exists()
    df = read_requests(tmp_path)
    assert list(df.t_send) == [10.0, 11.0, 12.0, 13.0] and list(df.entry) == ["a", "b", "a", "b"]
    assert list(df.error) == ["", "", "", "Timeout"]


def test_a_request_log_cut_mid_row_is_read_to_its_last_whole_row_and_says_so(tmp_path):
    from harness.results.summary import read_requests

    head = "t_send,latency_ms,status,bytes,error,pod,entry\n"
    (tmp_path / "requests.csv").write_text(head + "10.0,5,200,1,,a-1,a\n12.0,5,200,1,,a-1,a\n13.0,9")
    df = read_requests(tmp_path)
    assert list(df.t_send) == [10.0, 12.0] and df.latency_ms.dtype.kind in "if"
    assert len(df.attrs["skipped"]) == 1 and "requests.csv: 1 incomplete row skipped" in df.attrs["skipped"][0]
    (tmp_path / "requests.csv").write_text(head + "10.0,5,200,1,,a-1,a\n")
    assert read_requests(tmp_path).attrs["skipped"] == []


def test_one_request_cut_short_by_the_end_is_still_keeping_up_and_more_are_not():
    from harness.loadgen import TIMED_OUT, UNFINISHED

    rows = [(100 + i * 0.3, 200.0, 200, 10, "", "p") for i in range(99)]
    rows[-1] = (rows[-1][0], 0.0, 0, 0, UNFINISHED, "p")  # the closed loop's last request, in flight at the end
    assert summarize(log(rows), t_start=100, t_end=130, warmup_s=0, threshold_ms=250)["kept_up"]
    rows[10] = (rows[10][0], 10000.0, 0, 0, TIMED_OUT, "p")
    rows[20] = (rows[20][0], 10000.0, 0, 0, TIMED_OUT, "p")
    assert not summarize(log(rows), t_start=100, t_end=130, warmup_s=0, threshold_ms=250)["kept_up"]
