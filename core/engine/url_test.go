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
