#!/usr/bin/env python3
"""Writes the expected bench_summary.json bytes for report_test.go.

The original tool writes json.dumps(obj, indent=2) with no trailing newline;
these files are that, byte for byte. The inputs must stay identical to
summaryFixture and escapesFixture in report_test.go.

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


def write(name, obj):
    with open(os.path.join(HERE, name), "w", encoding="ascii", newline="") as f:
        f.write(json.dumps(obj, indent=2))


write("summary.json", {
    "config": config(),
    "results": RESULTS,
    "run": {"run_id": "20250101T000000Z-0a1b2c3d", "lmbench_version": "0.1.0", "interrupted": False},
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
    "run": {"run_id": "", "lmbench_version": "v\u00b2", "interrupted": True},
})
