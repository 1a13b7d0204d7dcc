package main

import (
	"os"
	"strings"

	"github.com/varve/varve/experiments/internal/machine"
)

// machineInfo describes where the figures were measured.
type machineInfo = machine.Info

func readMachine() machineInfo { return machine.Read() }

func loadAvg() string { return machine.LoadAvg() }

func load1() float64 { return machine.Load1() }

// countLines is the number of lines of a file, -1 if unreadable.
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	return strings.Count(string(b), "\n")
}
