package kvcache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/report"
)

// When --reset-cache resets the engine's prefix cache (core/config's
// values of the option).
const (
	ResetNever         = config.ResetNever
	ResetBeforeWarmup  = config.ResetBeforeWarmup
	ResetBeforeMeasure = config.ResetBeforeMeasure
)

// ResetPlan is a --reset-cache (Config.Reset; nil: never).
type ResetPlan struct {
	When string // ResetBeforeWarmup or ResetBeforeMeasure
	// URL is POSTed to (config.Endpoint.ResetURL: the engine's origin +
	// /reset_prefix_cache, vLLM's; SGLang calls it /flush_cache).
	URL string
	// Client posts the reset (nil: a client of its own).
	Client *http.Client
	// NotFound is said when the reset answers 404 (the engine's profile:
	// what it needs); "" says vLLM's.
	NotFound string
}

// probeWords is the probe prompt's length: many blocks of any tokenizer.
const probeWords = 400

// resetCache resets the engine's prefix cache and checks it worked. A
// probe prompt, new to the engine, is sent twice before the reset (the
// second must hit: the engine caches and reports it), then once after
// (it must not hit the engine's prefix cache). The hits are read from the
// engine's prefix-hit counter around each probe when metrics are on, else
// from the probe's own cached_tokens. The probes are not workload
// requests: they are not journaled, and the phase boundaries' samples are
// taken after them. A reset that fails, or does not clear, is reported;
// it never stops the run.
func resetCache(ctx context.Context, plan *ResetPlan, sender Sender, scrape Scrape, log zerolog.Logger) *report.CacheReset {
	r := &report.CacheReset{When: plan.When, URL: engine.RedactURL(plan.URL), Cleared: "unknown"}
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	text := probeText(hex.EncodeToString(nonce))
	var external float64 // the connector's hits in the last probe, by its counter
	probe := func(n int) (hits float64, viaCounters bool, err error) {
		before := sample(ctx, scrape, enginemetrics.PointReset)
		res := sender.Send(ctx, engine.Request{ID: fmt.Sprintf("lmbench-reset-probe-%d", n),
			Messages: []engine.Message{{Role: "user", Content: text}}, MaxTokens: 1})
		after := sample(ctx, scrape, enginemetrics.PointReset)
		if !res.Success {
			return 0, false, fmt.Errorf("probe request: %s", res.Error)
		}
		external, _ = counterDelta(before, after, enginemetrics.VLLMExternalHits)
		if d, ok := counterDelta(before, after, enginemetrics.VLLMPrefixHits, enginemetrics.SGLangCachedTokens); ok {
			return d, true, nil
		}
		return float64(res.CachedTokens), false, nil
	}
	warm := func() (float64, bool, error) {
		if _, _, err := probe(1); err != nil {
			return 0, false, err
		}
		return probe(2)
	}
	hitBefore, viaCounters, err := warm()
	if err != nil {
		r.Detail = "could not check: " + err.Error()
		log.Warn().Str("reset", plan.When).Msg("cache reset: " + r.Detail)
	}

	r.Status, r.Error = postReset(ctx, plan)
	if r.Error != "" {
		r.Cleared = "no"
		r.Detail = "the reset failed: " + r.Error
		log.Warn().Str("reset", plan.When).Msg("cache reset: " + r.Detail)
		return r
	}
	if err != nil {
		return r
	}
	hitAfter, viaAfter, err := probe(3)
	switch {
	case err != nil:
		r.Detail = "could not check after the reset: " + err.Error()
	case hitBefore == 0:
		r.Detail = "could not check: a repeated probe prompt hit nothing even before the reset (prefix caching off, or the engine reports no cached tokens: vLLM needs --enable-prompt-tokens-details, SGLang --enable-cache-report)"
	case hitAfter > 0:
		r.Cleared = "no"
		r.Detail = fmt.Sprintf("the reset answered %d but did not clear: the probe prompt still hit %s tokens after it (%s before)",
			r.Status, fmtTokens(hitAfter), fmtTokens(hitBefore))
		if !viaAfter {
			r.Detail += "; cached_tokens counts a KV connector's (LMCache's) hits too, which the reset does not clear: with metrics on, lmbench tells them apart"
		}
	default:
		r.Cleared = "yes"
		r.Detail = fmt.Sprintf("the probe prompt hit %s tokens before the reset and none after", fmtTokens(hitBefore))
		if viaAfter && external > 0 {
			r.Detail += fmt.Sprintf("; %s tokens still came from the KV connector (LMCache), which /reset_prefix_cache does not clear",
				fmtTokens(external))
		}
	}
	if viaCounters && viaAfter {
		r.Detail += " (by the engine's prefix-cache hit counter)"
	} else if err == nil {
		r.Detail += " (by the probe's cached_tokens)"
	}
	lvl := log.Info()
	if r.Cleared != "yes" {
		lvl = log.Warn()
	}
	lvl.Str("reset", plan.When).Str("cleared", r.Cleared).Msg("cache reset: " + r.Detail)
	return r
}

// sample is scrape's sample at point, nil when metrics are off.
func sample(ctx context.Context, scrape Scrape, point string) *enginemetrics.Sample {
	if scrape == nil {
		return nil
	}
	return scrape(ctx, point)
}

// probeText is a prompt no engine has seen: the nonce first, so no block
// of it is shared with anything else.
func probeText(nonce string) string {
	var b strings.Builder
	b.WriteString("lmbench cache reset probe " + nonce + ":")
	for i := range probeWords {
		fmt.Fprintf(&b, " w%s%d", nonce[:4], i)
	}
	return b.String()
}

// postReset POSTs the reset; status is its answer, errText why it failed.
func postReset(ctx context.Context, plan *ResetPlan) (status int, errText string) {
	c := plan.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, plan.URL, nil)
	if err != nil {
		return 0, err.Error()
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		msg := fmt.Sprintf("POST %s: %s", engine.RedactURL(plan.URL), resp.Status)
		if resp.StatusCode == http.StatusNotFound {
			hint := plan.NotFound
			if hint == "" {
				hint = "vLLM serves it only when started with VLLM_SERVER_DEV_MODE=1; SGLang's is /flush_cache"
			}
			msg += " (" + hint + ")"
		}
		return resp.StatusCode, msg
	}
	return resp.StatusCode, ""
}

// counterDelta is the first of keys both samples hold: after - before.
func counterDelta(before, after *enginemetrics.Sample, keys ...string) (float64, bool) {
	if before == nil || after == nil || !before.OK() || !after.OK() {
		return 0, false
	}
	for _, k := range keys {
		a, okA := before.Snap.Values[k]
		b, okB := after.Snap.Values[k]
		if okA && okB && b >= a {
			return b - a, true
		}
	}
	return 0, false
}

func fmtTokens(v float64) string { return fmt.Sprint(int64(math.Round(v))) }
