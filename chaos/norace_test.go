//go:build !race

package chaos_test

// raceEnabled reports whether this test binary runs under the race detector.
const raceEnabled = false
