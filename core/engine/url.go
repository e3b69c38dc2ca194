package engine

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

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

// endpointPaths are API paths a user may paste along with the address;
// lmbench appends them itself.
var endpointPaths = []string{"/chat/completions", "/completions", "/models", "/tokenize"}

// CheckBaseURL checks an engine address as typed, before anything is
// contacted, and returns the API base URL NormalizeURL would build from
// it. A scheme other than http or https, a missing host, a query or a
// fragment is an error saying what was given and what is expected. A
// pasted endpoint path (…/v1/chat/completions) is cut off and returned as
// stripped, for the caller to mention.
func CheckBaseURL(raw string) (base, stripped string, err error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", "", errors.New("is empty; expected http://host:port (or host:port)")
	}
	withScheme := s
	if i := strings.Index(s, "://"); i >= 0 {
		scheme := strings.ToLower(s[:i])
		if scheme != "http" && scheme != "https" {
			return "", "", fmt.Errorf("%q has the scheme %q; expected http:// or https://", RedactURL(s), s[:i])
		}
	} else {
		withScheme = "http://" + s
	}
	u, err := url.Parse(withScheme)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a URL: %v", RedactURL(s), err)
	}
	switch {
	case u.Host == "" || u.Hostname() == "":
		return "", "", fmt.Errorf("%q has no host; expected http://host:port", RedactURL(s))
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return "", "", fmt.Errorf("%q has a query or fragment; expected the server's address, e.g. http://host:port or http://host:port/v1", RedactURL(s))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", "", fmt.Errorf("%q has the port %q; expected 1-65535", RedactURL(s), p)
		}
	}
	path := strings.TrimRight(u.Path, "/")
	for _, ep := range endpointPaths {
		if strings.HasSuffix(path, ep) {
			stripped = ep
			path = strings.TrimSuffix(path, ep)
			break
		}
	}
	u.Path = path
	return NormalizeURL(u.String()), stripped, nil
}

// RedactURL drops credentials from a URL before it is printed or exported.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}
