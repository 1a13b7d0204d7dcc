package harness

import (
	"flag"
	"os"
	"time"

	"github.com/varve/varve/diskmodel"
)

// Common holds the flags every storage experiment takes: where it writes
// its logs and results, -quick, and how it uses the disk model.
type Common struct {
	Dir        string        // -dir: parent of the temporary logs; the disk model is calibrated there
	Out        string        // -out: results root (see OutDir)
	Quick      bool          // -quick: a short smoke run
	NoModel    bool          // -no-model: no calibration, no predictions
	MaxCalAge  time.Duration // -max-calibration-age: reuse a cached calibration at most this old
	NoProgress bool          // -no-progress
}

// Register adds the common flags to fs for the experiment name; quick
// says what -quick shortens.
func (c *Common) Register(fs *flag.FlagSet, name, quick string) {
	fs.StringVar(&c.Dir, "dir", os.TempDir(), "directory under which the logs are written (and removed); the disk model is calibrated there")
	fs.StringVar(&c.Out, "out", "experiments/"+name+"/results", "results root: a full run writes <root>/<YYYY-MM-DD>/, -quick writes <root>/quick/")
	fs.BoolVar(&c.Quick, "quick", false, quick)
	fs.BoolVar(&c.NoModel, "no-model", false, "skip the disk model (no calibration, no predictions)")
	fs.DurationVar(&c.MaxCalAge, "max-calibration-age", diskmodel.DefaultMaxAge,
		"reuse the disk model's cached calibration of -dir only if younger than this; 1s calibrates afresh")
	fs.BoolVar(&c.NoProgress, "no-progress", false, "no progress bar")
}

// ModelOptions are the disk-model options the flags ask for; given, when
// not nil, is used instead of calibrating (tests).
func (c *Common) ModelOptions(given *diskmodel.Calibration) ModelOptions {
	return ModelOptions{Dir: c.Dir, MaxAge: c.MaxCalAge, Quick: c.Quick, Given: given, Skip: c.NoModel}
}

// Flags returns the flags set on the command line of fs, after Parse:
// experiments use it to fill -quick defaults the user did not override.
func Flags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
