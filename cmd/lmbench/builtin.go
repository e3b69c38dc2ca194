package main

// builtinEngine is the --engine-url value that starts the built-in
// simulated engine inside the run.
const builtinEngine = "builtin"

// statusSourceURL returns the server whose LMCache-shaped /status gives
// tokens per GB when --tokens-per-gb-kvcache is not set: --lmcache-url if
// given, else the built-in engine itself (base, its URL once started),
// whose /status reports its own --sim-tokens-per-gb; "" when there is
// neither.
func statusSourceURL(lmcacheURL, engineURLFlag, base string) string {
	if lmcacheURL != "" || engineURLFlag != builtinEngine {
		return lmcacheURL
	}
	return base
}
