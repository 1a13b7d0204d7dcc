package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// write puts one text file per step and summary.md into the session's
// results folder.
func (e *exp) write(s *harness.Session) error {
	for i, o := range e.outcomes {
		name := filepath.Join(s.Out, stepFile(i+1, o.Tool))
		if err := os.WriteFile(name, []byte(stepText(i+1, o)), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(s.Out, "summary.md"), []byte(e.summary(s)), 0o644)
}

// stepFile is NN-<tool>.txt.
func stepFile(n int, tool string) string { return fmt.Sprintf("%02d-%s.txt", n, tool) }

// stepText is one step's record.
func stepText(n int, o outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d: %s %s\n\ncommand:\n  %s\n\nexit status: %d (%s)\n\n", n, o.Tool, o.Title, o.Command, o.Exit,
		o.Took.Round(time.Millisecond))
	fmt.Fprintf(&b, "expected: %s\nseen:     %s\nverdict:  %s\n\noutput:\n%s\n", o.Expected, o.Seen, verdict(o.OK), o.Output)
	return b.String()
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

var reCell = regexp.MustCompile(`[|\n]`)

// cell makes s fit one Markdown table cell.
func cell(s string) string { return reCell.ReplaceAllString(s, " ") }

// summary is summary.md: the run's header and a table of every step.
func (e *exp) summary(s *harness.Session) string {
	var b strings.Builder
	s.WriteHeader(&b, "Kafka's tools against a three-node Varve cluster", "kafkatools", nil)
	passed := 0
	for _, o := range e.outcomes {
		if o.OK {
			passed++
		}
	}
	fmt.Fprintf(&b, "\nApache Kafka %s's command-line tools (main classes of the kafka-tools jar, `java -cp`), "+
		"each with --bootstrap-server %s, against three `varve server` nodes in combined mode "+
		"(internal/localcluster). %d of %d steps passed.\n\n", e.cfg.kafkaVersion, e.sanitize(e.bootstrap), passed, len(e.outcomes))
	b.WriteString("| # | tool | step | exit | verdict | expected | seen | record |\n|---|---|---|---|---|---|---|---|\n")
	for i, o := range e.outcomes {
		fmt.Fprintf(&b, "| %d | %s | %s | %d | %s | %s | %s | [%s](%s) |\n", i+1, o.Tool, cell(o.Title), o.Exit,
			verdict(o.OK), cell(o.Expected), cell(o.Seen), stepFile(i+1, o.Tool), stepFile(i+1, o.Tool))
	}
	return b.String()
}
