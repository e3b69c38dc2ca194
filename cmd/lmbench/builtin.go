package main

// builtinEngine is the --engine-url value that starts the built-in
// simulated engine inside the run.
const builtinEngine = "builtin"

// hasStatusSource reports whether tokens per GB can be read from an
// LMCache-shaped /status: given --lmcache-url, or with the built-in engine,
// whose /status reports its own --sim-tokens-per-gb.
func hasStatusSource(lmcacheURL, engineURLFlag string) bool {
	return lmcacheURL != "" || engineURLFlag == builtinEngine
}

// statusSourceURL returns the server to read /status from: --lmcache-url
// if given, else the built-in engine (base: its URL once started).
func statusSourceURL(lmcacheURL, engineURLFlag, base string) string {
	if lmcacheURL != "" || engineURLFlag != builtinEngine {
		return lmcacheURL
	}
	return base
}
