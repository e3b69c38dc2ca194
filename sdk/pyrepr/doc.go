// Package pyrepr formats values the way the Python original writes them, so
// lmbench's CSV and JSON outputs match `lmcache bench engine` byte for byte.
//
// Float is Python's repr(float) (which is also str(float) and what the csv
// module writes); JSONFloat is what json.dumps writes for a float; Bool is
// str(bool):
//
//	pyrepr.Float(100)             // "100.0"
//	pyrepr.Float(1e-5)            // "1e-05"
//	pyrepr.JSONFloat(math.Inf(1)) // "Infinity"
//	pyrepr.Bool(true)             // "True"
//
// Golden vectors in testdata/ were produced by testdata/gen.py with python3;
// regenerate them with `go generate ./pyrepr/`.
package pyrepr

//go:generate python3 testdata/gen.py
