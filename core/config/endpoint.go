package config

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/enginemetrics"
)

// BuiltinEngine is the engine URL that starts the built-in simulated
// engine inside the run.
const BuiltinEngine = "builtin"

// Endpoint is the engine a run sends to, normalised once: every URL the
// run needs is derived here and nowhere else.
type Endpoint struct {
	// Typed is the address as the user gave it (a bare port read as
	// http://localhost:PORT); Origin names the flag, key or variable.
	Typed, Origin string
	// Builtin: the run starts the built-in engine; its URLs are set once
	// it listens (Started).
	Builtin bool
	// Base is the API base the requests go to, e.g.
	// http://localhost:8000/v1.
	Base string
	// Root is the server's root, Base without its /v1: where /tokenize,
	// /metrics and the built-in engine's LMCache-shaped /status are.
	Root string
	// Shown is the engine as summaries, logs and spans name it:
	// credentials removed, "builtin (URL)" for the built-in engine.
	Shown string
	// Stripped is an endpoint path pasted after the address and cut off
	// (/chat/completions, …), for a warning; "" when none.
	Stripped string
	// MetricsURL is the engine's Prometheus exposition: --metrics-url, or
	// the base's origin + /metrics ("" with --no-metrics).
	MetricsURL string
	// ResetURL is the prefix-cache reset: the base's origin +
	// /reset_prefix_cache (vLLM's; SGLang's /flush_cache is its name for it).
	ResetURL string

	metricsURL string // --metrics-url as given
	metricsOff bool
}

// MetricsGiven reports whether --metrics-url named the exposition (else
// MetricsURL is the engine's own /metrics, derived).
func (e Endpoint) MetricsGiven() bool { return e.metricsURL != "" }

// Started is the built-in engine's endpoint once it listens at base.
func (e Endpoint) Started(base string) Endpoint {
	_ = e.at(engine.NormalizeURL(base), "builtin ("+base+")") // base is the engine's own http://127.0.0.1:PORT
	return e
}

// at sets the URLs derived from the API base.
func (e *Endpoint) at(base, shown string) error {
	e.Base, e.Root, e.Shown = base, strings.TrimSuffix(base, "/v1"), shown
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	e.ResetURL = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/reset_prefix_cache"}).String()
	switch {
	case e.metricsOff:
		e.MetricsURL = ""
	case e.metricsURL != "":
		e.MetricsURL = e.metricsURL
	default:
		if e.MetricsURL, err = enginemetrics.URLFor(base); err != nil {
			return err
		}
	}
	return nil
}

// PortOnly reads a bare port number as a server on this machine
// ("8000" → "http://localhost:8000"), as the original's setup does.
func PortOnly(u string) string {
	if n, err := strconv.Atoi(strings.TrimSpace(u)); err == nil && n > 0 && n < 65536 {
		return "http://localhost:" + strconv.Itoa(n)
	}
	return u
}

// RedactURL drops credentials from a URL before it is printed or exported
// (engine.RedactURL, the one redactor).
func RedactURL(s string) string { return engine.RedactURL(s) }

// CheckURL tells whether an engine or LMCache address, as typed, is one:
// an http(s) scheme or none, a host, no query (engine.CheckBaseURL).
func CheckURL(raw string) error {
	_, _, err := engine.CheckBaseURL(PortOnly(raw))
	return err
}
