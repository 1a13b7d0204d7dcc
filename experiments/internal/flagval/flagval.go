// Package flagval parses the values experiments take on their command
// lines: byte sizes with units and comma-separated lists.
package flagval

import (
	"fmt"
	"strconv"
	"strings"
)

// Size parses a byte count: a number, optionally with a unit (B, KB, MB,
// GB in powers of 1000; KiB, MiB, GiB in powers of 1024), as "64MiB",
// "1e6" or "1.5GiB". A negative or malformed value is an error.
func Size(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	num, mult := s, int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(v * float64(mult)), nil
}

// List splits a comma-separated list, trimming items and dropping empty
// ones.
func List(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Counts parses a comma-separated list of positive integers ("1,4,16");
// an empty list is an error.
func Counts(s string) ([]int, error) {
	var out []int
	for _, f := range List(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no counts in %q", s)
	}
	return out, nil
}

// PositiveSize is Size refusing zero.
func PositiveSize(s string) (int64, error) {
	v, err := Size(s)
	if err == nil && v == 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v, err
}
