package main

import "github.com/varve/varve/experiments/internal/machine"

// machineInfo describes where the figures were measured.
type machineInfo = machine.Info

func readMachine() machineInfo { return machine.Read() }

func readLoadAvg() string { return machine.LoadAvg() }
