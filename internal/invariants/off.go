//go:build !invariants && !race

package invariants

// Enabled: this build does not check invariants.
const Enabled = false
