package main

import "github.com/varve/varve/experiments/internal/machine"

// machineInfo describes where the figures were measured.
type machineInfo = machine.Info

func readMachine() machineInfo { return machine.Read() }

func loadAvg() string { return machine.LoadAvg() }

func load1() float64 { return machine.Load1() }
