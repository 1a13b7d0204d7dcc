package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/varve/varve/experiments/internal/harness"
)

// write puts results.csv, calibration.json, machine.json (this run's
// network and append calibration), the plot and summary.md in the
// results folder.
func (e *experiment) write() error {
	rows := make([][]string, len(e.out))
	for i, x := range e.out {
		rows[i] = []string{x.Case, x.Variant, fmt.Sprint(x.Rep), x.Metric, harness.G(x.Value), x.Unit}
	}
	if err := harness.WriteCSV(filepath.Join(e.s.Out, "results.csv"), []string{"case", "variant", "rep", "metric", "value", "unit"}, rows); err != nil {
		return err
	}
	if err := e.s.WriteCalibration(e.s.Out); err != nil {
		return err
	}
	b, err := json.MarshalIndent(e.cal, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(e.s.Out, "network.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f := compute(e.out, e.cal)
	plots, err := writePlots(e.s.Out, f)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.s.Out, "summary.md"), []byte(e.summary(f, plots)), 0o644)
}
