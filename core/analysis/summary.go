package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/lmbench/lmbench/core/stats"
)

// Summary is the part of bench_summary.json a report shows
// (docs/results-schema.md). A figure written null is NaN.
type Summary struct {
	// Config is the summary's "config" member (the original's keys), in order.
	Config      []Field
	Results     Results
	RunID       string
	Version     string
	Interrupted bool
	// Status and Reason are run.status and run.reason ("" in summaries
	// written before they existed: Status then reads from Interrupted).
	Status, Reason string
	// Failures is "failures", by phase; nil when absent (then
	// FailureGroups groups the records' error texts).
	Failures map[string]FailurePhase
	// Percentiles are those Metrics report; Metrics is "metrics" (nil in
	// a summary written before lmbench 0.2), by key ("ttft_ms", …).
	Percentiles []float64
	Metrics     map[string]MetricSummary
	// ITLPercentiles is how itl_ms's percentiles were computed.
	ITLPercentiles string
	// Cache is "cache"; nil when absent.
	Cache *CacheSummary
	// Overhead is the overhead certificate's members, flattened in order
	// ("dispatch_lag_ms.p99", …), and its verdict line; nil when the
	// summary has none (a killed run's).
	Overhead     []Field
	OverheadText string
	Saturated    bool
	// Load and Goodput are "load" and "goodput" (zero when absent).
	Load    LoadSummary
	Goodput GoodputSummary
}

// Results is the summary's "results" member, the original's figures.
type Results struct {
	TotalRequests      int64    `json:"total_requests"`
	SuccessfulRequests int64    `json:"successful_requests"`
	FailedRequests     int64    `json:"failed_requests"`
	ElapsedTime        float64  `json:"elapsed_time"`
	InputThroughput    *float64 `json:"input_throughput"`
	OutputThroughput   *float64 `json:"output_throughput"`
	OutputTokens       int64    `json:"total_output_tokens"`
	P50TTFTMs          *float64 `json:"p50_ttft_ms"`
	P99TTFTMs          *float64 `json:"p99_ttft_ms"`
}

// LoadSummary is the summary's "load" member: the rate the workload asked for
// against the one achieved, and the schedule's slip by statistic ("p99",
// "max", …). A figure written null is nil.
type LoadSummary struct {
	RequestedRate    *float64            `json:"requested_rate"`
	AchievedSendRate *float64            `json:"achieved_send_rate"`
	AchievedFraction *float64            `json:"achieved_fraction"`
	CompletionRate   *float64            `json:"completion_rate"`
	ScheduleSlipMs   map[string]*float64 `json:"schedule_slip_ms"`
}

// GoodputSummary is the summary's "goodput" member: requests meeting the SLO per
// second, and the share meeting each limit by limit ("ttft", …, "all").
type GoodputSummary struct {
	Rate       *float64            `json:"goodput_rps"`
	Attainment map[string]*float64 `json:"attainment"`
}

// MetricSummary is one of the summary's metrics: count, mean, std,
// median and one value per percentile (NaN when not defined).
type MetricSummary struct {
	Count             int
	Mean, Std, Median float64
	Percentiles       []stats.Quantile
}

// CacheSummary is the summary's "cache" member.
type CacheSummary struct{ Warmup, Measure CachePhase }

// CachePhase is one phase's prompt and cached tokens.
type CachePhase struct {
	Requests           int64    `json:"requests"`
	PromptTokens       int64    `json:"prompt_tokens"`
	CachedTokens       int64    `json:"cached_tokens"`
	CachedRatio        *float64 `json:"cached_ratio"`
	RequestsWithCached int64    `json:"requests_with_cached_tokens"`
}

// FailurePhase is one phase's failures in the summary.
type FailurePhase struct {
	Requests int64         `json:"requests"`
	Failed   int64         `json:"failed"`
	Kinds    []FailureKind `json:"kinds"`
}

// FailureKind is one kind of failure with its count and an example.
type FailureKind struct {
	Kind           string `json:"kind"`
	Label          string `json:"label"`
	Count          int64  `json:"count"`
	Example        string `json:"example"`
	ExampleRequest string `json:"example_request_id"`
}

// ParseSummary reads bench_summary.json.
func ParseSummary(b []byte) (Summary, error) {
	var s Summary
	var doc struct {
		Config  json.RawMessage `json:"config"`
		Results Results         `json:"results"`
		Run     struct {
			RunID       string `json:"run_id"`
			Version     string `json:"lmbench_version"`
			Interrupted bool   `json:"interrupted"`
			Status      string `json:"status"`
			Reason      string `json:"reason"`
		} `json:"run"`
		Failures map[string]FailurePhase    `json:"failures"`
		Metrics  map[string]json.RawMessage `json:"metrics"`
		Cache    *CacheSummary              `json:"cache"`
		Overhead json.RawMessage            `json:"overhead"`
		Load     LoadSummary                `json:"load"`
		Goodput  GoodputSummary             `json:"goodput"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return s, fmt.Errorf("not a bench_summary.json: %w", err)
	}
	var err error
	if s.Config, err = Flatten(doc.Config); err != nil {
		return s, fmt.Errorf("config: %w", err)
	}
	s.Results = doc.Results
	s.RunID, s.Version, s.Interrupted = doc.Run.RunID, doc.Run.Version, doc.Run.Interrupted
	s.Status, s.Reason, s.Failures = doc.Run.Status, doc.Run.Reason, doc.Failures
	s.Cache, s.Load, s.Goodput = doc.Cache, doc.Load, doc.Goodput
	if doc.Metrics != nil {
		if err := json.Unmarshal(doc.Metrics["percentiles"], &s.Percentiles); err != nil {
			return s, fmt.Errorf("metrics.percentiles: %w", err)
		}
		if m, ok := doc.Metrics["itl_percentiles"]; ok {
			json.Unmarshal(m, &s.ITLPercentiles) // null: none
		}
		s.Metrics = map[string]MetricSummary{}
		for k, raw := range doc.Metrics {
			if k == "percentiles" || k == "itl_percentiles" {
				continue
			}
			var vals map[string]*float64
			if err := json.Unmarshal(raw, &vals); err != nil {
				return s, fmt.Errorf("metrics.%s: %w", k, err)
			}
			m := MetricSummary{Mean: nan(vals["mean"]), Std: nan(vals["std"]), Median: nan(vals["median"])}
			if c := vals["count"]; c != nil {
				m.Count = int(*c)
			}
			for _, p := range s.Percentiles {
				m.Percentiles = append(m.Percentiles, stats.Quantile{P: p, Value: nan(vals["p"+stats.FormatPercentile(p)])})
			}
			s.Metrics[k] = m
		}
	}
	if len(doc.Overhead) > 0 && string(doc.Overhead) != "null" {
		if s.Overhead, err = Flatten(doc.Overhead); err != nil {
			return s, fmt.Errorf("overhead: %w", err)
		}
		var v struct {
			Verdict struct {
				Text      string `json:"text"`
				Saturated bool   `json:"saturated"`
			} `json:"verdict"`
		}
		json.Unmarshal(doc.Overhead, &v)
		s.OverheadText, s.Saturated = v.Verdict.Text, v.Verdict.Saturated
	}
	return s, nil
}

func nan(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Field is one leaf of a JSON object: its dotted path and its value as
// written (strings unquoted; null as "null"; arrays as compact JSON).
type Field struct{ Key, Value string }

// Flatten lists a JSON object's leaves in document order. An empty input
// is an empty list.
func Flatten(raw json.RawMessage) ([]Field, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out []Field
	if err := flattenValue(dec, "", &out); err != nil {
		return nil, err
	}
	return out, nil
}

func flattenValue(dec *json.Decoder, path string, out *[]Field) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if path != "" {
					k = path + "." + k
				}
				if err := flattenValue(dec, k, out); err != nil {
					return err
				}
			}
			_, err = dec.Token() // '}'
			return err
		case '[':
			var items []string
			for dec.More() {
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return err
				}
				var c bytes.Buffer
				json.Compact(&c, v)
				items = append(items, c.String())
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			*out = append(*out, Field{path, "[" + strings.Join(items, ",") + "]"})
			return nil
		}
		return errors.New("unexpected " + t.String())
	case string:
		*out = append(*out, Field{path, t})
	case json.Number:
		*out = append(*out, Field{path, t.String()})
	case bool:
		*out = append(*out, Field{path, fmt.Sprint(t)})
	case nil:
		*out = append(*out, Field{path, "null"})
	}
	return nil
}

// Percentile is the metric's pth percentile (NaN when the run did not
// compute it; its median for the 50th).
func (m MetricSummary) Percentile(p float64) float64 {
	for _, q := range m.Percentiles {
		if stats.FormatPercentile(q.P) == stats.FormatPercentile(p) {
			return q.Value
		}
	}
	if p == 50 {
		return m.Median
	}
	return math.NaN()
}
