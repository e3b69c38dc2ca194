"""Analysing lmbench results with pandas (and polars).

Columns are documented in docs/results-schema.md. Usage:

    pip install pandas pyarrow polars
    python analysis.py out/bench_results.parquet
"""

import json
import sys

import pandas as pd
import pyarrow.parquet as pq

path = sys.argv[1] if len(sys.argv) > 1 else "bench_results.parquet"

# The run's metadata and final summary live in the file footer.
meta = {k.decode(): v.decode() for k, v in pq.read_schema(path).metadata.items() if k.startswith(b"lmbench.")}
print("run", meta["lmbench.run_id"], "lmbench", meta["lmbench.version"], "schema", meta["lmbench.schema_version"])
summary = json.loads(meta["lmbench.summary"])
print("summary mean TTFT (ms):", summary["results"]["mean_ttft_ms"])

# pandas: timestamps are datetime64[ns, UTC], durations are milliseconds,
# ttft_ms is NaN for requests without a first token.
df = pd.read_parquet(path)
measured = df[df["phase"] == "measure"]
print(f"{len(df)} requests ({len(measured)} measured, {int((~df['success']).sum())} failed)")

per_doc = (
    measured[measured["success"]]
    .groupby("tag_doc")["ttft_ms"]
    .agg(requests="count", avg_ttft_ms="mean", p90_ttft_ms=lambda s: s.quantile(0.9))
)
print(per_doc)

# The tags map arrives as a list of (key, value) pairs per row.
tags = pd.json_normalize(measured["tags"].map(dict).tolist())
print("tag keys:", sorted(tags.columns))

# Requests in flight over time, from submit and finish timestamps.
events = pd.concat([
    pd.Series(1, index=measured["submit_time"]),
    pd.Series(-1, index=measured["finish_time"]),
]).sort_index().cumsum()
print("max concurrency:", int(events.max()))

# polars, if installed: the same per-document figures, lazily.
try:
    import polars as pl
except ImportError:
    sys.exit(0)
print(
    pl.scan_parquet(path)
    .filter((pl.col("phase") == "measure") & pl.col("success"))
    .group_by("tag_doc")
    .agg(pl.len().alias("requests"), pl.col("ttft_ms").mean().alias("avg_ttft_ms"))
    .sort(pl.col("tag_doc").cast(pl.Int64))
    .collect()
)
