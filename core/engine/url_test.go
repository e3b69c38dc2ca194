package engine

import "testing"

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"appends /v1", "http://localhost:8000", "http://localhost:8000/v1"},
		{"keeps /v1", "http://localhost:8000/v1", "http://localhost:8000/v1"},
		{"strips trailing slash", "http://localhost:8000/", "http://localhost:8000/v1"},
		{"strips trailing slash after /v1", "http://localhost:8000/v1/", "http://localhost:8000/v1"},
		{"strips several slashes", "http://h:1//", "http://h:1/v1"},
		{"adds http://", "localhost:8000", "http://localhost:8000/v1"},
		{"keeps https://", "https://api.example.com", "https://api.example.com/v1"},
		{"scheme case-insensitive", "HTTP://h:8000", "HTTP://h:8000/v1"},
		{"keeps a path", "http://h/proxy", "http://h/proxy/v1"},
		{"trims spaces", " http://h:8000 ", "http://h:8000/v1"},
		{"idempotent", NormalizeURL("h:8000/"), "http://h:8000/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := NormalizeURL(tt.in); got != tt.want {
				t.Errorf("NormalizeURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCheckBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, base, stripped, err string
	}{
		{in: "localhost:8000", base: "http://localhost:8000/v1"},
		{in: "http://h:8000/", base: "http://h:8000/v1"},
		{in: "https://h/v1", base: "https://h/v1"},
		{in: "HTTP://h:1", base: "http://h:1/v1"},
		{in: "http://h:8000/serving", base: "http://h:8000/serving/v1"},
		{in: "http://h:8000/v1/chat/completions", base: "http://h:8000/v1", stripped: "/chat/completions"},
		{in: "h:8000/v1/completions/", base: "http://h:8000/v1", stripped: "/completions"},
		{in: "http://h:8000/v1/models", base: "http://h:8000/v1", stripped: "/models"},
		{in: "htp://host:8000", err: `"htp://host:8000" has the scheme "htp"; expected http:// or https://`},
		{in: "ftp://u:secret@host", err: `"ftp://host" has the scheme "ftp"; expected http:// or https://`},
		{in: "http://", err: `"http://" has no host; expected http://host:port`},
		{in: "http://h:8000/v1?x=1", err: `"http://h:8000/v1?x=1" has a query or fragment; expected the server's address, e.g. http://host:port or http://host:port/v1`},
		{in: "http://h:99999", err: `"http://h:99999" has the port "99999"; expected 1-65535`},
		{in: "  ", err: "is empty; expected http://host:port (or host:port)"},
	}
	for _, tc := range tests {
		base, stripped, err := CheckBaseURL(tc.in)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("CheckBaseURL(%q) error = %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("CheckBaseURL(%q) = %v", tc.in, err)
		case tc.err == "" && (base != tc.base || stripped != tc.stripped):
			t.Errorf("CheckBaseURL(%q) = %q, %q; want %q, %q", tc.in, base, stripped, tc.base, tc.stripped)
		}
	}
}
