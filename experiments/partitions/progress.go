package main

import (
	"io"

	"github.com/varve/varve/experiments/internal/progress"
)

// progressBar is the experiment's progress bar (one bar, counting runs).
type progressBar = progress.Bar

func newProgress(w io.Writer, runs int, enabled bool) *progressBar {
	return progress.New(w, runs, enabled)
}
