// Package failure tells what went wrong with a failed request from its
// error text, the one thing a record keeps of a failure: an HTTP status,
// a connection that never got a response (refused, reset, DNS, TLS, a
// connect timeout), a timeout and its limit, a broken stream, or
// something else. The host's abort policy asks [Classify] whether a
// failure is connection-level; the summary groups a phase's failures by
// kind with a [Tally]:
//
//	var t failure.Tally
//	for _, r := range records {
//		t.Add(r.Success, r.RequestID, r.Error)
//	}
//	b := t.Breakdown() // kinds by count, one example each
//
// Classification reads only the text, so a journal re-exported later
// groups its failures exactly as the run did.
package failure
