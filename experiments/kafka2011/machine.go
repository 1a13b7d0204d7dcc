package main

import (
	"context"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/machine"
)

// machineInfo describes where and when the figures were measured: the
// machine description every experiment shares, plus the date, the disk
// and the Java the peers ran on.
type machineInfo struct {
	machine.Info
	date time.Time
	disk string // file system and device of the data directories
	java string
}

func readMachine(ctx context.Context, tmp string) machineInfo {
	m := machineInfo{Info: machine.Read(), date: time.Now().UTC()}
	if out, err := harness.RunTool(ctx, 10*time.Second, nil, "df", "-hT", tmp); err == nil {
		m.disk = lastLine(string(out))
	}
	if out, err := harness.RunTool(ctx, 30*time.Second, nil, "java", "-version"); err == nil {
		m.java = firstLine(string(out))
	}
	return m
}

// readLoadAvg returns the 1, 5 and 15 minute load averages.
func readLoadAvg() string { return machine.LoadAvg() }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(strings.Fields(lines[len(lines)-1]), " ")
}
