// Package scripttest is what the coordinators' scripted tests (package
// group's and package txn's testdata/script, run with
// github.com/cockroachdb/datadriven) share: the dispatch of a script's
// commands, and the arguments and names every script prints the same
// way.
//
// # Concurrency
//
// None: a script runs on its test's goroutine.
//
// # Invariants
//
// A script's first command is "new"; a command that prints nothing
// shows "ok", so that every step of a script has an expected output.
package scripttest
