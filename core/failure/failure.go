package failure

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Kind is what went wrong with one request.
type Kind struct {
	// ID is stable, for machines: "http_404", "connection_refused",
	// "timeout", "stream_broken", "other", …
	ID string
	// Label is for people, and what failures are grouped by: "HTTP 404",
	// "connection refused", "timeout (first token, 2m0s)".
	Label string
	// Connection: the request never got an HTTP response (refused, reset
	// or closed before one, DNS, TLS, a connect timeout, no route, no
	// file descriptor left). A run of these means the engine is gone.
	Connection bool
	// Status is the HTTP status code of an "HTTP <code>" failure, else 0.
	Status int
	// Hint says what usually causes it, for people; "" when nothing useful.
	Hint string
}

// The kinds without parameters.
var (
	Refused      = Kind{ID: "connection_refused", Label: "connection refused", Connection: true}
	Reset        = Kind{ID: "connection_reset", Label: "connection reset", Connection: true}
	Closed       = Kind{ID: "connection_closed", Label: "connection closed before a response", Connection: true}
	DNS          = Kind{ID: "dns", Label: "DNS lookup failed", Connection: true}
	TLS          = Kind{ID: "tls", Label: "TLS failure", Connection: true}
	Unreachable  = Kind{ID: "network_unreachable", Label: "network unreachable", Connection: true}
	NoFiles      = Kind{ID: "too_many_open_files", Label: "too many open files (client)", Connection: true}
	StreamBroken = Kind{ID: "stream_broken", Label: "stream broken",
		Hint: "the engine ended the stream early: it may stop an answer itself (Ollama's runner does when one token repeats " +
			"30 times, as a small or random-weight model may), or a proxy timed it out or the engine crashed; its log says which"}
	StreamError = Kind{ID: "stream_error", Label: "error event in the stream"}
	NoContent   = Kind{ID: "no_content", Label: "stream without content"}
	Cancelled   = Kind{ID: "cancelled", Label: "cancelled (drain timeout)"}
	Other       = Kind{ID: "other", Label: "other"}
)

var (
	statusRE   = regexp.MustCompile(`^HTTP (\d{3})\b`)
	durationRE = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))*\b`)
	// limitRE finds which limit a timeout message names.
	limitRE = regexp.MustCompile(`\b(connect|first[- ]token|idle|total|response[- ]header|request)\b`)
)

// Classify reads a failed request's error text (as core/engine writes
// it, or any Sender). Order matters: an HTTP status first (the engine
// answered), then our own cancellation, timeouts (a dial timeout is a
// connection failure), a stream cut short after the response began
// (whatever broke it), then the ways a connection fails before any
// response.
func Classify(msg string) Kind {
	if m := statusRE.FindStringSubmatch(msg); m != nil {
		code, _ := strconv.Atoi(m[1])
		return Kind{ID: "http_" + m[1], Label: "HTTP " + m[1], Status: code}
	}
	low := strings.ToLower(msg)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(low, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("tls handshake timeout"):
		return TLS
	case has("timeout", "timed out", "deadline exceeded"):
		return timeout(low)
	case has("context canceled", "request canceled", "operation was canceled"):
		return Cancelled
	case strings.HasPrefix(low, "stream ended before [done]"), strings.HasPrefix(low, "reading stream"),
		strings.HasPrefix(low, "sse line longer"):
		return StreamBroken
	case strings.HasPrefix(low, "stream error"):
		return StreamError
	case strings.HasPrefix(low, "stream ended without content"):
		return NoContent
	case has("too many open files"):
		return NoFiles
	case has("connection refused"):
		return Refused
	case has("connection reset", "broken pipe"):
		return Reset
	case has("no such host", "server misbehaving", "dial tcp: lookup", "dns lookup"):
		return DNS
	case has("tls:", "x509:", "certificate", "first record does not look like a tls handshake",
		"server gave http response to https client"):
		return TLS
	case has("no route to host", "network is unreachable", "host is down"):
		return Unreachable
	case strings.HasSuffix(low, ": eof"), low == "eof", has("server closed idle connection", "unexpected eof"):
		return Closed
	}
	return Other
}

// timeout is a timeout failure, labelled with the limit it names and its
// value when the message says them ("timeout (first token, 2m0s)"). A
// timeout while dialling is a connection failure.
func timeout(low string) Kind {
	limit := ""
	if m := limitRE.FindStringSubmatch(low); m != nil {
		limit = strings.ReplaceAll(m[1], "-", " ")
	}
	if strings.Contains(low, "dial tcp") || strings.Contains(low, "dial udp") || strings.HasPrefix(low, "connect timeout") {
		limit = "connect"
	}
	var detail []string
	if limit != "" {
		detail = append(detail, limit)
	}
	if d := durationRE.FindString(low); d != "" {
		detail = append(detail, d)
	}
	k := Kind{ID: "timeout", Label: "timeout"}
	if limit == "connect" {
		k.ID, k.Connection = "connect_timeout", true
	}
	if len(detail) > 0 {
		k.Label += " (" + strings.Join(detail, ", ") + ")"
	}
	return k
}

// MaxExample caps an example message, in bytes (the engine's error bodies
// are capped at 512 already).
const MaxExample = 1024

// Count is one kind of failure in a phase: how many, and the first one
// seen as an example.
type Count struct {
	Kind
	Count          int
	Example        string // the first such error text
	ExampleRequest string // the request it came from
}

// Breakdown is a phase's failures by kind, the most frequent first.
type Breakdown struct {
	Requests, Failed int
	Kinds            []Count
}

// Tally counts failures by kind. The zero Tally is empty and ready.
type Tally struct {
	requests, failed int
	byLabel          map[string]*Count
	order            []*Count // first-seen order, for a stable tie-break
}

// Add counts one finished request.
func (t *Tally) Add(success bool, requestID, msg string) {
	if success {
		t.requests++
		return
	}
	t.AddFailure(Classify(msg), requestID, msg)
}

// AddFailure counts a failed request already classified as k.
func (t *Tally) AddFailure(k Kind, requestID, msg string) {
	t.requests++
	t.failed++
	if t.byLabel == nil {
		t.byLabel = map[string]*Count{}
	}
	c := t.byLabel[k.Label]
	if c == nil {
		c = &Count{Kind: k, Example: Truncate(msg, MaxExample), ExampleRequest: requestID}
		t.byLabel[k.Label] = c
		t.order = append(t.order, c)
	}
	c.Count++
}

// Breakdown is what was counted: kinds by count (ties in first-seen order).
func (t *Tally) Breakdown() Breakdown {
	b := Breakdown{Requests: t.requests, Failed: t.failed}
	for _, c := range t.order {
		b.Kinds = append(b.Kinds, *c)
	}
	slices.SortStableFunc(b.Kinds, func(x, y Count) int { return cmp.Compare(y.Count, x.Count) })
	return b
}

// Summary is the kinds as one line, "12× connection refused, 3× HTTP
// 500", the most frequent first.
func (b Breakdown) Summary() string {
	parts := make([]string, len(b.Kinds))
	for i, c := range b.Kinds {
		parts[i] = strconv.Itoa(c.Count) + "× " + c.Label
	}
	return strings.Join(parts, ", ")
}

// Truncate cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
