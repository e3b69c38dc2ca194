-- Analysing lmbench results with DuckDB (duckdb CLI, Python or any binding).
-- Columns: docs/results-schema.md. Run from a run's output directory:
--   duckdb < analysis.sql
-- or point the file name at yours (a glob such as 'runs/*/bench_results.parquet'
-- reads several runs at once; run_id tells them apart).

-- The run this file comes from: id, lmbench version, schema version, summary.
SELECT decode(key) AS key, decode(value) AS value
FROM parquet_kv_metadata('bench_results.parquet')
WHERE decode(key) IN ('lmbench.run_id', 'lmbench.version', 'lmbench.schema_version',
                      'lmbench.workload', 'lmbench.model', 'lmbench.interrupted');

-- Requests per phase, and how many failed.
SELECT phase, count(*) AS requests, count(*) FILTER (NOT success) AS failed
FROM 'bench_results.parquet'
GROUP BY phase ORDER BY phase;

-- long-doc-qa: TTFT per document (measured requests). The first question on
-- a document after warm-up should hit the KV cache; compare with the warm-up row.
SELECT tag_doc,
       count(*)                                    AS requests,
       round(avg(ttft_ms), 3)                      AS avg_ttft_ms,
       round(quantile_cont(ttft_ms, 0.9), 3)       AS p90_ttft_ms,
       round(avg(cached_tokens / nullif(input_tokens, 0)), 3) AS cached_fraction
FROM 'bench_results.parquet'
WHERE phase = 'measure' AND success
GROUP BY tag_doc
ORDER BY tag_doc::INTEGER;

-- The same figures as bench_summary.json (TTFT and latency over successful
-- measured requests).
SELECT count(*)                                 AS total_requests,
       count(*) FILTER (success)                AS successful_requests,
       avg(ttft_ms) FILTER (success)            AS mean_ttft_ms,
       quantile_cont(ttft_ms, 0.99)             AS p99_ttft_ms,
       avg(latency_ms) FILTER (success)         AS mean_request_latency_ms
FROM 'bench_results.parquet'
WHERE phase = 'measure';

-- Inter-token latency pooled over every gap, not averaged per request (the
-- itl_ms column is each request's mean): consecutive differences of
-- chunk_offsets_us (µs after submit, in arrival order) within each
-- successful measured request, in ms. A request whose offsets were cut
-- short (chunk_offsets_truncated) contributes its first 16,384 chunks.
WITH chunks AS (
    SELECT run_id, seq,
           unnest(chunk_offsets_us)                AS offset_us,
           unnest(range(len(chunk_offsets_us)))    AS i
    FROM 'bench_results.parquet'
    WHERE phase = 'measure' AND success
), gaps AS (
    SELECT (offset_us - lag(offset_us) OVER (PARTITION BY run_id, seq ORDER BY i)) / 1000.0 AS itl_ms
    FROM chunks
)
SELECT count(itl_ms)                          AS gaps,
       round(quantile_cont(itl_ms, 0.5), 3)   AS p50_itl_ms,
       round(quantile_cont(itl_ms, 0.9), 3)   AS p90_itl_ms,
       round(quantile_cont(itl_ms, 0.99), 3)  AS p99_itl_ms
FROM gaps
WHERE itl_ms IS NOT NULL;

-- Why the answers ended, and the time per output token after the first.
SELECT finish_reason, count(*) AS requests,
       round(avg(tpot_ms), 3)                 AS mean_tpot_ms,
       round(quantile_cont(tpot_ms, 0.99), 3) AS p99_tpot_ms
FROM 'bench_results.parquet'
WHERE phase = 'measure' AND success
GROUP BY finish_reason ORDER BY requests DESC;

-- Throughput over time: finished requests and output tokens per second.
SELECT time_bucket(INTERVAL 1 second, finish_time) AS second,
       count(*)           AS finished,
       sum(output_tokens) AS output_tokens
FROM 'bench_results.parquet'
WHERE phase = 'measure'
GROUP BY second ORDER BY second;

-- Every tag through the map column (works for any workload, declared or not).
SELECT t.key, t.value, count(*) AS requests, avg(ttft_ms) AS avg_ttft_ms
FROM (SELECT unnest(map_entries(tags)) AS t, ttft_ms FROM 'bench_results.parquet' WHERE phase = 'measure')
GROUP BY ALL ORDER BY t.key, t.value;

-- Failures and their errors.
SELECT request_id, error, latency_ms
FROM 'bench_results.parquet'
WHERE NOT success
ORDER BY seq;
