package main

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/varve/varve/benchmarks/storage"
)

// printBenchTable prints the disk model, then one row per figure
// (figure, measured, model, ratio, target, status, raw peer, vs peer),
// then each figure's details.
func printBenchTable(w io.Writer, r benchResult) {
	fmt.Fprintf(w, "$ %s\n\n", r.Command)
	fmt.Fprint(w, r.Calibration.String())
	fmt.Fprintf(w, "\nlog of %d MiB, %s per timed workload, %s in all; load average %.2f at start, %.2f at end, %d CPUs\n",
		r.Report.LogBytes>>20, r.Report.Budget, r.Report.Elapsed.Round(100_000_000), r.LoadAvg[0], r.LoadAvg[1], runtime.NumCPU())
	if r.LoadAvg[0] >= float64(runtime.NumCPU())/2 || r.LoadAvg[1] >= float64(runtime.NumCPU())/2 {
		fmt.Fprintln(w, "warning: the machine was busy with other work: figures are noisy and likely pessimistic")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tmeasured\tmodel\tratio\ttarget\tstatus\traw peer\tvs peer")
	for _, f := range r.Report.Figures {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, benchValueCell(f.Measured, f.Unit), benchModelCell(f), benchRatioCell(f.Ratio),
			f.Target, f.Status, benchPeerCell(f), benchRatioCell(f.VsPeer))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nratio = measured speed / model speed (1.00 = as fast as the disk model predicts)")
	fmt.Fprintln(w, "raw peer = the same I/O without the log (pwrite, fdatasync, pread) just before; vs peer = measured / raw peer")
	for _, f := range r.Report.Figures {
		if f.Detail != "" {
			fmt.Fprintf(w, "  %s: %s\n", f.Name, f.Detail)
		}
	}
}

// benchModelCell renders the model column: "-" where no model applies.
func benchModelCell(f storage.Figure) string {
	if f.Model == 0 {
		return "-"
	}
	return benchValueCell(f.Model, f.Unit)
}

// benchPeerCell renders the raw peer column.
func benchPeerCell(f storage.Figure) string {
	if f.Peer == 0 {
		return "-"
	}
	return benchValueCell(f.Peer, f.Unit)
}

// benchValueCell renders a measured or modelled value in its unit.
func benchValueCell(v float64, unit string) string {
	switch {
	case unit == "allocs/append":
		return fmt.Sprintf("%.2f", v)
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

func benchRatioCell(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r)
}
