package engine

import "strings"

// NormalizeURL turns a user-typed engine address into the API base URL, as
// the original tool does: trailing slashes are stripped, "http://" is added
// when there is no http/https scheme, and "/v1" is appended unless the URL
// already ends with it ("h:8000/" → "http://h:8000/v1").
func NormalizeURL(raw string) string {
	u := strings.TrimRight(strings.TrimSpace(raw), "/")
	if !hasPrefixFold(u, "http://") && !hasPrefixFold(u, "https://") {
		u = "http://" + u
	}
	if !strings.HasSuffix(u, "/v1") {
		u += "/v1"
	}
	return u
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
