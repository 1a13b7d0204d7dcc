//go:build invariants || race

package invariants

// Enabled: this build checks invariants.
const Enabled = true
