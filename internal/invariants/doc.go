// Package invariants switches on expensive self-checks: Enabled is true
// when the build has the "invariants" tag or the race detector, as in
// pebble. Code checks what must always hold (offsets increasing after an
// append, no index entry past the end of its log, ...) only when
// Enabled, so production builds pay nothing; CI runs the race detector,
// and so the checks, over the packages with concurrency.
package invariants
