// Package harness is what every experiment under experiments/ shares: the
// command's main function, the results layout, the loop that runs a plan
// under a progress bar beside the calibrated disk model, medians over
// repetitions, CSV and calibration files, and the summary's header.
//
// # Results layout
//
// A full run writes experiments/<name>/results/<YYYY-MM-DD>/ (the date the
// run started, UTC) and a -quick run writes results/quick/, replaced by
// the next quick run. A paper cites the dated folder of the run it uses,
// so a later run never changes what a paper points at. A second full run
// on the same day writes into the same folder; keep the first by renaming
// it (the papers name such a folder, e.g. 2026-11-29-repeat).
//
// # Use
//
//	func main() { harness.Main("flushpolicy", parseFlags, run) }
//
//	func run(ctx context.Context, cfg config) (string, error) {
//		s, err := harness.Start("results", cfg.quick)
//		...
//		s.Bar = progress.New(os.Stderr, len(plan), !cfg.noProgress)
//		if err := s.LoadModel(ctx, harness.ModelOptions{Dir: cfg.dir, Quick: cfg.quick}); err != nil { ... }
//		results, err := harness.Execute(ctx, s.Bar, plan, e.runOne)
//		s.End()
//		...
//	}
//
// Nothing here runs in the background: an experiment is one goroutine
// driving its runs, and the progress bar's renderer (package progress).
package harness
