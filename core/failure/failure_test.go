package failure

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The messages are what core/engine's Sender wrote for each case (taken
// from real runs against real sockets), plus the forms other senders and
// the timeouts write.
func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg  string
		want Kind
	}{
		{`HTTP 404: {"object":"error","message":"The model ` + "`x`" + ` does not exist.","code":404}`,
			Kind{ID: "http_404", Label: "HTTP 404", Status: 404}},
		{"HTTP 500", Kind{ID: "http_500", Label: "HTTP 500", Status: 500}},
		{"HTTP 401: Unauthorized", Kind{ID: "http_401", Label: "HTTP 401", Status: 401}},
		{`Post "http://127.0.0.1:41287/v1/completions": dial tcp 127.0.0.1:41287: connect: connection refused`, Refused},
		{`Post "http://no-such-host.invalid:8000/v1/completions": dial tcp: lookup no-such-host.invalid on 10.255.255.53:53: no such host`, DNS},
		{`Post "http://127.0.0.1:38943/v1/completions": read tcp 127.0.0.1:55762->127.0.0.1:38943: read: connection reset by peer`, Reset},
		{`Post "http://127.0.0.1:1/v1/completions": write tcp 127.0.0.1:5->127.0.0.1:1: write: broken pipe`, Reset},
		{`Post "http://127.0.0.1:41969/v1/completions": EOF`, Closed},
		{`Post "https://127.0.0.1:40063/v1/completions": tls: failed to verify certificate: x509: certificate signed by unknown authority`, TLS},
		{`Post "https://127.0.0.1:44671/v1/completions": http: server gave HTTP response to HTTPS client`, TLS},
		{`Post "https://h/v1/completions": net/http: TLS handshake timeout`, TLS},
		{`Post "http://10.0.0.1:8000/v1/completions": dial tcp 10.0.0.1:8000: i/o timeout`,
			Kind{ID: "connect_timeout", Label: "timeout (connect)", Connection: true}},
		{"connect timeout 10s exceeded", Kind{ID: "connect_timeout", Label: "timeout (connect, 10s)", Connection: true}},
		{`Post "http://h/v1/completions": dial tcp 10.0.0.1:8000: connect: no route to host`, Unreachable},
		{`Post "http://h/v1/completions": dial tcp 127.0.0.1:8000: socket: too many open files`, NoFiles},
		// A stream cut short is broken whatever cut it.
		{"reading stream after 1 data lines: read tcp 127.0.0.1:42482->127.0.0.1:38691: read: connection reset by peer", StreamBroken},
		{"stream ended before [DONE]: unexpected EOF after 3 data lines (2 with content)", StreamBroken},
		{"SSE line longer than 16777216 bytes", StreamBroken},
		{`stream error: {"message":"out of memory"}`, StreamError},
		{"stream ended without content", NoContent},
		// Timeouts keep their limit and its value.
		{"first-token timeout: no first token within 2m0s", Kind{ID: "timeout", Label: "timeout (first token, 2m0s)"}},
		{"idle timeout: no chunk for 30s after 12 chunks", Kind{ID: "timeout", Label: "timeout (idle, 30s)"}},
		{"total timeout 1h30m0s exceeded", Kind{ID: "timeout", Label: "timeout (total, 1h30m0s)"}},
		{"context deadline exceeded", Kind{ID: "timeout", Label: "timeout"}},
		{"context canceled", Cancelled},
		{`Post "http://h/v1/completions": context canceled`, Cancelled},
		{"request not sent: json: unsupported value", Other},
		{"", Other},
		// "HTTP" not at the start is no status.
		{"proxy said HTTP 502", Other},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Classify(tt.msg)); diff != "" {
			t.Errorf("Classify(%q) (-want +got):\n%s", tt.msg, diff)
		}
	}
}

func TestTally(t *testing.T) {
	t.Parallel()
	var tl Tally
	if diff := cmp.Diff(Breakdown{}, tl.Breakdown()); diff != "" {
		t.Errorf("empty tally (-want +got):\n%s", diff)
	}
	refused := `Post "http://h:1/v1/chat/completions": dial tcp h:1: connect: connection refused`
	tl.Add(true, "ok1", "")
	tl.Add(false, "a", "HTTP 500: boom")
	tl.Add(false, "b", refused)
	tl.Add(false, "c", refused+" (second)")
	tl.Add(false, "d", "HTTP 500: other body")
	tl.Add(false, "e", "HTTP 404: nope")
	tl.Add(false, "f", refused)
	want := Breakdown{Requests: 7, Failed: 6, Kinds: []Count{
		{Kind: Refused, Count: 3, Example: refused, ExampleRequest: "b"},
		{Kind: Kind{ID: "http_500", Label: "HTTP 500", Status: 500}, Count: 2, Example: "HTTP 500: boom", ExampleRequest: "a"},
		{Kind: Kind{ID: "http_404", Label: "HTTP 404", Status: 404}, Count: 1, Example: "HTTP 404: nope", ExampleRequest: "e"},
	}}
	b := tl.Breakdown()
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("breakdown (-want +got):\n%s", diff)
	}
	if got, want := b.Summary(), "3× connection refused, 2× HTTP 500, 1× HTTP 404"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	// Different timeout limits are different groups.
	var tt Tally
	tt.Add(false, "x", "idle timeout: no chunk for 30s")
	tt.Add(false, "y", "total timeout 10m0s exceeded")
	if got := tt.Breakdown().Summary(); got != "1× timeout (idle, 30s), 1× timeout (total, 10m0s)" {
		t.Errorf("timeouts = %q", got)
	}
}

func TestExampleIsCapped(t *testing.T) {
	t.Parallel()
	long := "HTTP 500: " + strings.Repeat("é", MaxExample)
	var tl Tally
	tl.Add(false, "a", long)
	ex := tl.Breakdown().Kinds[0].Example
	if len(ex) > MaxExample+len("…") || !strings.HasSuffix(ex, "…") || !strings.HasPrefix(ex, "HTTP 500: é") {
		t.Errorf("example of %d bytes: %d bytes, %q…", len(long), len(ex), ex[:20])
	}
	for i, r := range strings.TrimSuffix(ex, "…") {
		if r == '\uFFFD' {
			t.Fatalf("cut inside a rune at byte %d", i)
		}
	}
	if got := Truncate("short", 10); got != "short" {
		t.Errorf("Truncate(short) = %q", got)
	}
}
