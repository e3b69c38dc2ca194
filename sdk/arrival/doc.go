// Package arrival gives open-loop workloads their arrival processes:
// constant, Poisson and gamma (bursty), seeded, on an absolute schedule.
//
// Request k is due at its own time, the sum of k gaps drawn in order from
// a generator seeded once: never "now + a gap", so a late Step never
// pushes later requests back, and Due(k) is the same whichever order it
// is asked in. Request 0 is due at 0, the start of the phase.
//
//	s, err := arrival.New(o.Arrival, o.Rate, o.Burstiness, env.Seed)
//	if err != nil { return nil, err } // *option.FieldError: kind, rate, burstiness
//	...
//	for ; w.next < n && s.Due(w.next) <= in.Offset; w.next++ {
//		reqs = append(reqs, req(w.next).At(s.Due(w.next)))
//	}
//	return workload.Send(reqs...).WakeAt(s.Due(w.next)), nil
//
// The kinds, at rate r requests per second:
//
//   - constant: request k is due at k/r (gaps have a coefficient of
//     variation of 0);
//   - poisson: exponential gaps of mean 1/r (CV 1);
//   - gamma: gaps drawn from a gamma distribution of shape b and scale
//     1/(r·b), b the burstiness, as vLLM's `bench serve --burstiness`
//     defines it. The mean gap stays 1/r; the CV is 1/√b: b < 1 is
//     burstier than Poisson, b > 1 smoother, b = 1 is Poisson (the very
//     same draws as kind poisson).
//
// vLLM draws its N gaps up front and rescales them so that the last
// request lands on N/r, making the achieved rate exact for any seed; a
// Schedule is unbounded, and Normalize(n) does the same for a workload
// that knows its length (request n due at n/r). Without it the achieved
// rate of a finite run is the drawn one: 1200 ± 35 requests in 60 s at
// 20 req/s for a Poisson stream. vLLM also delays its first request by
// one gap; here request 0 goes out at once, as with constant.
//
// Kinds lists the kind names, for an option's enum tag; Names.Check
// validates a workload's options with errors naming them.
package arrival
