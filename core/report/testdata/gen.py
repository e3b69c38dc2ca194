#!/usr/bin/env python3
"""Writes the expected bench_summary.json bytes for report_test.go.

The original tool writes json.dumps(obj, indent=2) with no trailing newline;
these files are that, byte for byte. The inputs must stay identical to
summaryFixture, naFixture and escapesFixture in report_test.go. A figure
that is not defined is None (null).

    cd core/report && python3 testdata/gen.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def config(**over):
    c = {
        "engine_url": "http://localhost:8000",
        "model": "test-model",
        "workload": "long-doc-qa",
        "kv_cache_volume_gb": 100.0,
        "tokens_per_gb_kvcache": 50000,
        "seed": 42,
        "output_dir": ".",
        "export_csv": True,
        "export_json": True,
        "quiet": False,
    }
    c.update(over)
    return c


# stats.Final in the spec's key order (§4.1), then lmbench's additions.
RESULTS = {
    "total_requests": 3,
    "successful_requests": 2,
    "failed_requests": 1,
    "elapsed_time": 1.23,
    "mean_ttft_ms": 300.0,
    "mean_decode_speed": 0.1 + 0.2,
    "mean_request_latency_ms": 2000.5,
    "input_throughput": 16260.162601626016,
    "output_throughput": 1e-05,
    "total_input_tokens": 20000,
    "total_output_tokens": 256,
    "p50_ttft_ms": 100.0,
    "p90_ttft_ms": 1e16,
    "p99_ttft_ms": 123456789012345.0,
    "p50_decode_speed": 0.0001,
    "p90_decode_speed": 1.5e-07,
    "p99_decode_speed": 1.0 / 3,
    "p50_request_latency_ms": 0.0,
    "p90_request_latency_ms": -2.5,
    "p99_request_latency_ms": 1e100,
    "mean_itl_ms": 12.5,
    "p50_itl_ms": 10.0,
    "p90_itl_ms": 20.0,
    "p99_itl_ms": 29.99,
    "mean_dispatch_lag_ms": -0.25,
    "p50_dispatch_lag_ms": 0.5,
    "p99_dispatch_lag_ms": 3.0,
}

ZERO = {k: (0 if isinstance(v, int) else 0.0) for k, v in RESULTS.items()}

# Nothing succeeded: every mean and percentile is not defined (null).
NA = {k: (v if isinstance(v, int) else None) for k, v in ZERO.items()}
NA.update(total_requests=2, failed_requests=2, elapsed_time=0.5, input_throughput=0.0, output_throughput=0.0)


def dist(ps, count=0, mean=None, std=None, median=None, values=None):
    """A stats.Dist as the summary writes it; values align with ps."""
    d = {"count": count, "mean": mean, "std": std, "median": median}
    for i, p in enumerate(ps):
        key = "p" + (str(int(p)) if p == int(p) else repr(p))
        d[key] = values[i] if values else None
    return d


def cache(requests=0, prompt=0, cached=0, with_cache=0):
    return {
        "requests": requests,
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "cached_ratio": cached / prompt if prompt else None,
        "requests_with_cached_tokens": with_cache,
    }


PS = [50.0, 90.0, 99.0, 99.9]
METRICS = {
    "percentiles": PS,
    "ttft_ms": dist(PS, 2, 300.0, 100.0, 300.0, [300.0, 380.0, 398.0, 399.8]),
    "tpot_ms": dist(PS, 1, 12.5, 0.0, 12.5, [12.5, 12.5, 12.5, 12.5]),
    "itl_ms": dist(PS, 254, 0.1 + 0.2, 3.25, 10.0, [10.0, 20.0, 29.99, 1e-05]),
    "itl_percentiles": "sketch (\u00b10.1%)",
    "e2e_ms": dist(PS, 2, 2000.5, 0.5, 2000.5, [2000.5, 2000.9, 2000.99, 1e16]),
    "ttft_from_scheduled_ms": dist(PS),
    "e2e_from_scheduled_ms": dist(PS, 2, 2010.5, 10.5, 2010.5, [2010.5, 2018.9, 2020.79, 2020.979]),
}
CACHE = {"warmup": cache(2, 20000, 0, 0), "measure": cache(3, 20000, 19000, 2)}

NA_PS = [50.0, 90.0, 99.0]
NA_METRICS = {
    "percentiles": NA_PS,
    "ttft_ms": dist(NA_PS),
    "tpot_ms": dist(NA_PS),
    "itl_ms": dist(NA_PS),
    "itl_percentiles": "exact",
    "e2e_ms": dist(NA_PS),
    "ttft_from_scheduled_ms": dist(NA_PS),
    "e2e_from_scheduled_ms": dist(NA_PS),
}

# The zero stats.Final: no percentiles, nothing computed.
ZERO_METRICS = {
    "percentiles": [],
    "ttft_ms": dist([]),
    "tpot_ms": dist([]),
    "itl_ms": dist([]),
    "itl_percentiles": None,
    "e2e_ms": dist([]),
    "ttft_from_scheduled_ms": dist([]),
    "e2e_from_scheduled_ms": dist([]),
}


def run(run_id="20250101T000000Z-0a1b2c3d", version="0.1.0", interrupted=False, status="completed",
        reason=None, planned=None, sent=0, finished=0):
    return {
        "run_id": run_id,
        "lmbench_version": version,
        "interrupted": interrupted,
        "status": status,
        "reason": reason,
        "planned_requests": planned,
        "sent_requests": sent,
        "finished_requests": finished,
    }


def failures(requests=0, failed=0, kinds=()):
    return {"requests": requests, "failed": failed, "kinds": list(kinds)}


def kind(kind, label, connection, count, example, request):
    return {
        "kind": kind,
        "label": label,
        "connection": connection,
        "count": count,
        "example": example,
        "example_request_id": request,
    }


NOT_FOUND = 'HTTP 404: {"object":"error","message":"The model `x` does not exist.","code":404}'


def load(ps, requested=None, send=None, fraction=None, completion=None, below=None, warning=None,
         slip=None, slip_max=None):
    s = slip if slip is not None else dist(ps)
    s = dict(s, max=slip_max)
    return {
        "requested_rate": requested,
        "achieved_send_rate": send,
        "achieved_fraction": fraction,
        "completion_rate": completion,
        "below_requested": below,
        "warning": warning,
        "schedule_slip_ms": s,
    }


def goodput(slo=None, good=None, rate=None, attainment=(None, None, None, None, None)):
    slo = slo or {}
    return {
        "slo_ms": {k: slo.get(k) for k in ("ttft", "tpot", "itl", "e2e")},
        "good_requests": good,
        "goodput_rps": rate,
        "attainment": dict(zip(("ttft", "tpot", "itl", "e2e", "all"), attainment)),
    }


LOAD = load(PS, 4.0, 3.5, 0.875, 2 / 1.23, True,
            "requests went out at 3.50 req/s, 87.5% of the 4 req/s requested: the client or the engine "
            "could not keep up (see the schedule slip)",
            dist(PS, 3, 0.5, 0.25, 0.5, [0.5, 0.9, 0.99, 0.999]), 1.0)
GOODPUT = goodput({"ttft": 200.0, "tpot": 50.0}, 1, 1 / 1.23, (1.0 / 3, 2.0 / 3, None, None, 1.0 / 3))


def write(name, obj):
    with open(os.path.join(HERE, name), "w", encoding="ascii", newline="") as f:
        f.write(json.dumps(obj, indent=2))


write("summary.json", {
    "config": config(),
    "results": RESULTS,
    "run": run(planned=3, sent=3, finished=3),
    "metrics": METRICS,
    "cache": CACHE,
    "failures": {
        "warmup": failures(2),
        "measure": failures(3, 1, [kind(
            "connection_refused", "connection refused", True, 1,
            'Post "http://localhost:8000/v1/chat/completions": dial tcp 127.0.0.1:8000: connect: connection refused',
            "doc1_q0")]),
    },
    "load": LOAD,
    "goodput": GOODPUT,
})

write("summary_na.json", {
    "config": config(),
    "results": NA,
    "run": run(interrupted=True, status="aborted",
               reason="the engine answered the first request with an error that every request would get: " + NOT_FOUND,
               sent=2, finished=2),
    "metrics": NA_METRICS,
    "cache": {"warmup": cache(), "measure": cache(2)},
    "failures": {
        "warmup": failures(),
        "measure": failures(2, 2, [kind("http_404", "HTTP 404", False, 2, NOT_FOUND, "doc0_q0")]),
    },
    "load": load(NA_PS),
    "goodput": goodput(),
})

write("summary_escapes.json", {
    "config": config(
        engine_url="http://h\u00f6st:8000/v1?q=\"x\"&p=a\\b",
        model="mod\u00e8le-\u4e2d\u6587-\U0001F600",
        workload="tab\there\nnl\rcr\bbs\fff\x01\x1f\x7f\x80\u2028",
        kv_cache_volume_gb=0.5,
        tokens_per_gb_kvcache=-1,
        seed=-9223372036854775808,
        output_dir="/tmp/r\u00e9sultats",
        export_csv=False,
        export_json=False,
        quiet=True,
    ),
    "results": ZERO,
    "run": run(run_id="", version="v\u00b2", interrupted=True, status="interrupted", reason='stopped: "\u00e9"\n'),
    "metrics": ZERO_METRICS,
    "cache": {"warmup": cache(), "measure": cache()},
    "failures": {"warmup": failures(), "measure": failures()},
    # The zero stats.Final: rates of 0, nothing requested, no SLO.
    "load": load([], 0.0, 0.0, None, 0.0, slip_max=0.0),
    "goodput": goodput(rate=0.0, attainment=(0.0, 0.0, 0.0, 0.0, 0.0)),
})
