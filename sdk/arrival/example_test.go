package arrival_test

import (
	"fmt"

	"github.com/lmbench/lmbench/sdk/arrival"
)

// A Poisson schedule at 4 requests per second: request k is due at its
// own time, the same for the same seed, whichever order it is asked in.
func ExampleNew() {
	s, err := arrival.New(arrival.Poisson, 4, 1, 42)
	if err != nil {
		panic(err)
	}
	fmt.Println(s)
	for k := range 4 {
		fmt.Printf("request %d due at %v\n", k, s.Due(k))
	}
	fmt.Println("request 2 again:", s.Due(2))
	// Output:
	// poisson, 4 req/s
	// request 0 due at 0s
	// request 1 due at 422.494443ms
	// request 2 due at 865.628634ms
	// request 3 due at 896.514764ms
	// request 2 again: 865.628634ms
}

// Check reports bad settings as option errors naming a workload's flags.
func ExampleNames_Check() {
	names := arrival.Names{Kind: "arrival", Rate: "rate", Burstiness: "burstiness"}
	fmt.Println(names.Check("poisson", 20, 0.5))
	fmt.Println(names.Check("gamma", 20, 0.5))
	// Output:
	// burstiness: applies to gamma arrivals only (poisson is gamma with burstiness 1), got 0.5 with poisson
	// <nil>
}
