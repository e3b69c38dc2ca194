package invocation

import (
	"os"
	"testing"

	"github.com/rs/zerolog"
)

// The first interrupt drains, the second hurries, the third quits; each
// step happens only on its own signal.
func TestInterruptSteps(t *testing.T) {
	t.Parallel()
	sig := make(chan os.Signal)
	quit := make(chan struct{})
	ctx, hurry, stop := Interrupts(sig, zerolog.Nop(), func() { close(quit) })
	defer stop()
	select {
	case <-ctx.Done():
		t.Fatal("cancelled before any signal")
	case <-hurry:
		t.Fatal("hurried before any signal")
	default:
	}
	sig <- os.Interrupt
	<-ctx.Done()
	select {
	case <-hurry:
		t.Fatal("hurried on the first signal")
	default:
	}
	sig <- os.Interrupt // taken only once the first was handled: unbuffered
	<-hurry
	select {
	case <-quit:
		t.Fatal("quit on the second signal")
	default:
	}
	sig <- os.Interrupt
	<-quit
}
