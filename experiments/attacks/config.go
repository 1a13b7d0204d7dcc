package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/varve/varve/experiments/internal/flagval"
)

// config is everything a run depends on; flags fill it.
type config struct {
	out        string
	varve      string // a built binary; default: go build ./cmd/varve
	attacks    []string
	scales     []int
	quick      bool
	size       float64 // -quick shrinks every attack to a quarter
	ceiling    int64   // bytes of RSS no attack may push the broker past
	killAt     int64   // the watchdog's limit
	goMemLimit string  // GOMEMLIMIT of the broker
	noProgress bool
}

func parseFlags(args []string) (config, error) {
	c := config{size: 1}
	fs := flag.NewFlagSet("attacks", flag.ContinueOnError)
	fs.StringVar(&c.out, "out", "experiments/attacks/results", "results root: a full run writes <root>/<YYYY-MM-DD>/, -quick writes <root>/quick/")
	fs.StringVar(&c.varve, "varve", "", "a built varve binary (default: go build ./cmd/varve)")
	attacks := fs.String("attacks", strings.Join(attackNames(), ","), "comma-separated attacks")
	scales := fs.String("scales", "1,10", "comma-separated multiples of each attack as first reproduced (-quick: 1)")
	fs.BoolVar(&c.quick, "quick", false, "smoke run: scale 1 only, each attack a quarter the size")
	ceiling := fs.String("ceiling", "2GiB", "peak RSS the broker must stay under in every run (default: the GOMEMLIMIT it is given)")
	killAt := fs.String("kill-at", "3GiB", "RSS at which the watchdog kills the broker (a container's memory limit)")
	fs.StringVar(&c.goMemLimit, "gomemlimit", "2GiB", "GOMEMLIMIT of the broker: the memory the operator gives it")
	fs.BoolVar(&c.noProgress, "no-progress", false, "no progress bar")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.ceiling, err = flagval.Size(*ceiling); err != nil {
		return c, fmt.Errorf("-ceiling: %w", err)
	}
	if c.killAt, err = flagval.Size(*killAt); err != nil {
		return c, fmt.Errorf("-kill-at: %w", err)
	}
	if c.scales, err = flagval.Counts(*scales); err != nil {
		return c, fmt.Errorf("-scales: %w", err)
	}
	if c.quick {
		c.size = 0.25
		if !flagSet(fs, "scales") {
			c.scales = []int{1}
		}
	}
	c.attacks = strings.Split(*attacks, ",")
	for _, a := range c.attacks {
		if !slices.Contains(attackNames(), a) {
			return c, fmt.Errorf("-attacks: unknown attack %q (known: %s)", a, strings.Join(attackNames(), ", "))
		}
	}
	return c, nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
