package abort

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine"
)

// HealthProbe checks, while a run goes on, that the engine still answers
// (Policy.Health). It asks GET /health (vLLM's, SGLang's), or GET
// /v1/models when the engine has no /health, or, when neither answers
// 2xx, only opens a TCP connection: whatever the engine serves, a dead
// one is noticed even when no request is finishing.
type HealthProbe struct {
	BaseURL  string // the engine's base URL, …/v1
	APIKey   string // sent as a bearer token, never logged
	Interval time.Duration
	// Client sends the probes; nil: one with ProbeTimeout.
	Client *http.Client
}

// ProbeTimeout bounds one health probe.
const ProbeTimeout = 5 * time.Second

// on reports whether the probe runs at all.
func (h HealthProbe) on() bool { return h.Interval > 0 && h.BaseURL != "" }

// prober sends the probes; its endpoint is chosen by the first probe the
// engine answers.
type prober struct {
	h        HealthProbe
	client   *http.Client
	endpoint string // "" until chosen; a URL, or "tcp"
	host     string // host:port, for the TCP probe
}

func newProber(h HealthProbe) (*prober, error) {
	u, err := url.Parse(h.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("health probe: %w", err)
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	c := h.Client
	if c == nil {
		c = &http.Client{Timeout: ProbeTimeout}
	}
	return &prober{h: h, client: c, host: host}, nil
}

// probe checks the engine once.
func (p *prober) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	if p.endpoint == "tcp" {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", p.host)
		if err != nil {
			return err
		}
		return c.Close()
	}
	if p.endpoint != "" {
		return p.get(ctx, p.endpoint)
	}
	// The first answer chooses: /health, else /v1/models, else TCP.
	base := strings.TrimSuffix(p.h.BaseURL, "/")
	health := strings.TrimSuffix(base, "/v1") + "/health"
	err := p.get(ctx, health)
	if err == nil {
		p.endpoint = health
		return nil
	}
	if _, status := err.(statusErr); !status {
		return err // no answer at all
	}
	models := base + "/models"
	if err := p.get(ctx, models); err == nil {
		p.endpoint = models
		return nil
	} else if _, status := err.(statusErr); !status {
		return err
	}
	p.endpoint = "tcp" // it answers HTTP, on neither path
	return nil
}

// statusErr is a probe answered with a status other than 2xx.
type statusErr struct {
	url    string
	status int
}

func (e statusErr) Error() string { return fmt.Sprintf("GET %s: HTTP %d", e.url, e.status) }

func (p *prober) get(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	key := p.h.APIKey
	if key == "" {
		key = engine.DefaultAPIKey // as every request sends
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusErr{u, resp.StatusCode}
	}
	return nil
}

// StartHealth probes the engine every h.Interval until stopped; after
// HealthFailures failed probes in a row it calls abort once and stops.
// Without a probe it does nothing.
func StartHealth(ctx context.Context, h HealthProbe, log zerolog.Logger, abort func(*Cause) bool) (stop func()) {
	if !h.on() {
		return func() {}
	}
	p, err := newProber(h)
	if err != nil {
		log.Warn().Err(err).Msg("no health probe")
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(h.Interval)
		defer t.Stop()
		failed := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := p.probe(ctx)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				if failed > 0 {
					log.Info().Msg("the engine answers the health probe again")
				}
				failed = 0
				continue
			}
			failed++
			msg := RedactKey(err.Error(), h.APIKey)
			log.Warn().Str("error", msg).Int("in_a_row", failed).Msg("engine health probe failed")
			if failed >= HealthFailures {
				if abort(&Cause{Title: "engine unreachable", Reason: fmt.Sprintf(
					"engine unreachable: %d health probes in a row failed, %s apart (the last: %s)", failed, h.Interval, msg)}) {
					return
				}
				// Requests still succeed: the probe, not the engine, is
				// failing (an overloaded health endpoint). Keep probing.
				failed = 0
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

func RedactKey(msg, key string) string {
	if key == "" {
		return msg
	}
	return strings.ReplaceAll(msg, key, "[REDACTED]")
}
