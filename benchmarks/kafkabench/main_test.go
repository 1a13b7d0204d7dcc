package kafkabench

import (
	"testing"

	"go.uber.org/goleak"
)

// Every run must end the goroutines it started (producers, the progress
// ticker) and close its clients.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
