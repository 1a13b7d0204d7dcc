package compaction

// Hooks for the external tests.
var (
	Acquire = acquire
	Release = release
)
