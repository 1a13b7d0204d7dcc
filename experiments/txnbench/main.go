package main

import "github.com/varve/varve/experiments/internal/harness"

func main() { harness.Main("txnbench", parseFlags, run) }
