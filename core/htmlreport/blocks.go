package htmlreport

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/lmbench/lmbench/core/analysis"
)

// blocks are the summary's members the report reads beyond what
// analysis.Summary holds (docs/results-schema.md): each nil when the
// summary has none (written before it existed, or recomputed from a
// journal).
type blocks struct {
	PromptTokens  *promptTokens  `json:"prompt_tokens"`
	Load          *loadBlock     `json:"load"`
	Goodput       *goodputBlock  `json:"goodput"`
	EngineMetrics *engineMetrics `json:"engine_metrics"`
	CacheLedger   *cacheLedger   `json:"cache_ledger"`
	Shards        []shardPart    `json:"shards"`
	Engine        *engineBlock   `json:"engine"`
}

// engineBlock is the engine as lmbench found it (the summary's engine
// block): its kind and what lmbench could and could not measure there.
type engineBlock struct {
	Kind         string   `json:"kind"`
	Name         string   `json:"name"`
	Version      *string  `json:"version"`
	DetectedFrom string   `json:"detected_from"`
	Can          []string `json:"can"`
	Cannot       []string `json:"cannot"`
}

// shardPart is a merged run's shard (the summary's shards block).
type shardPart struct {
	Index   int     `json:"index"`
	Count   int     `json:"count"`
	Missing bool    `json:"missing"`
	Host    *string `json:"host"`
	Status  string  `json:"status"`
	Reason  *string `json:"reason"`
	Sent    num     `json:"sent_requests"`
	Records num     `json:"records"`
	Late    num     `json:"lateness_ms"`
	Clock   struct {
		Reference string `json:"reference"`
		Offset    num    `json:"offset_ms"`
		RTT       num    `json:"rtt_ms"`
		Samples   int    `json:"samples"`
	} `json:"clock"`
}

// num is a JSON number or null (NaN).
type num float64

func (n *num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = num(f)
	return nil
}

func (n num) f() float64 { return float64(n) }

// s formats the figure (n/a when null): a whole number (a count, most
// often) as it is, anything else to about four significant digits.
func (n num) s() string {
	f := float64(n)
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return analysis.Num(f)
}

type promptTokens struct {
	Tokenizer string `json:"tokenizer"`
	Warmup    promptPhase
	Measure   promptPhase
}

type promptPhase struct {
	Requests       num `json:"requests"`
	Stated         num `json:"stated"`
	Measured       num `json:"measured"`
	Differing      num `json:"differing"`
	MeanDifference num `json:"mean_difference"`
}

type loadBlock struct {
	RequestedRate    num            `json:"requested_rate"`
	AchievedSendRate num            `json:"achieved_send_rate"`
	AchievedFraction num            `json:"achieved_fraction"`
	CompletionRate   num            `json:"completion_rate"`
	BelowRequested   *bool          `json:"below_requested"`
	Warning          *string        `json:"warning"`
	Slip             map[string]num `json:"schedule_slip_ms"`
}

type goodputBlock struct {
	SLO        map[string]num `json:"slo_ms"`
	GoodReqs   *num           `json:"good_requests"`
	GoodputRPS num            `json:"goodput_rps"`
	Attainment map[string]num `json:"attainment"`
}

type engineMetrics struct {
	URL         string      `json:"url"`
	Engine      *string     `json:"engine"`
	Scrapes     int         `json:"scrapes"`
	Failed      int         `json:"failed_scrapes"`
	FirstError  *string     `json:"first_error"`
	SamplesFile *string     `json:"samples_file"`
	Warmup      enginePhase `json:"warmup"`
	Measure     enginePhase `json:"measure"`
	Notes       []string    `json:"notes"`
}

type enginePhase struct {
	Queries     num            `json:"prefix_cache_queries"`
	Hits        num            `json:"prefix_cache_hits"`
	HitRate     num            `json:"prefix_cache_hit_rate"`
	External    num            `json:"external_prefix_cache_hits"`
	LMCacheReq  num            `json:"lmcache_requested_tokens"`
	LMCacheHits num            `json:"lmcache_hit_tokens"`
	Preemptions num            `json:"preemptions"`
	RunningMax  num            `json:"running_max"`
	WaitingMax  num            `json:"waiting_max"`
	KVUsageMax  num            `json:"kv_cache_usage_max"`
	TTFT        map[string]num `json:"ttft_ms"`
	ITL         map[string]num `json:"itl_ms"`
	E2E         map[string]num `json:"e2e_ms"`
}

type cacheLedger struct {
	Reset    *ledgerReset `json:"reset"`
	Warmup   ledgerPhase  `json:"warmup"`
	Measure  ledgerPhase  `json:"measure"`
	Verdicts []string     `json:"verdicts"`
}

type ledgerReset struct {
	When    string  `json:"when"`
	URL     string  `json:"url"`
	Status  *int    `json:"status"`
	Error   *string `json:"error"`
	Cleared string  `json:"cleared"`
	Detail  string  `json:"detail"`
}

type ledgerPhase struct {
	Requests       num    `json:"requests"`
	JournalCached  num    `json:"journal_cached_tokens"`
	Reporting      num    `json:"requests_reporting_cached_tokens"`
	EngineHits     num    `json:"engine_hit_tokens"`
	Difference     num    `json:"difference"`
	Tolerance      num    `json:"tolerance"`
	Agrees         string `json:"agrees"`
	Declared       num    `json:"declared_requests"`
	Expected       num    `json:"expected_cached_tokens"`
	DeclaredCached num    `json:"declared_cached_tokens"`
	Short          num    `json:"short_requests"`
	ColdWithHits   num    `json:"cold_requests_with_hits"`
	BelowOneBlock  num    `json:"expected_below_one_block"`
}

// blocksOf reads the run's summary's blocks; a member that does not parse
// is left nil (the report then says the summary has none).
func blocksOf(r *analysis.Run) blocks {
	var b blocks
	if json.Unmarshal(r.SummaryJSON, &b) != nil {
		var each map[string]json.RawMessage
		json.Unmarshal(r.SummaryJSON, &each)
		one := func(key string, dst any) {
			if raw, ok := each[key]; ok {
				json.Unmarshal(raw, dst)
			}
		}
		b = blocks{}
		one("prompt_tokens", &b.PromptTokens)
		one("load", &b.Load)
		one("goodput", &b.Goodput)
		one("engine_metrics", &b.EngineMetrics)
		one("cache_ledger", &b.CacheLedger)
		one("shards", &b.Shards)
		one("engine", &b.Engine)
	}
	return b
}
