package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// -quick shortens what the user did not set, and only that.
func TestParseFlagsQuick(t *testing.T) {
	c, err := parseFlags([]string{"-quick", "-probes", "5"})
	if err != nil {
		t.Fatal(err)
	}
	if c.probes != 5 || c.seqTopics != 50 || c.batches != 3 || !slices.Equal(c.sizes, []int{10, 1000, 10000}) {
		t.Errorf("quick config %+v", c)
	}
	if _, err := parseFlags([]string{"-sizes", "10,x"}); err == nil {
		t.Error("-sizes 10,x accepted")
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 3}, {99, 5}, {100, 5}, {0, 1}} {
		if got := percentile(ds, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
}

// A size no process here can hold is skipped with a reason naming the
// limit.
func TestCapacity(t *testing.T) {
	if got := capacity(1 << 40); !strings.Contains(got, "RLIMIT_NOFILE") && !strings.Contains(got, "vm.max_map_count") {
		t.Errorf("capacity(2^40) = %q, want a limit named", got)
	}
	if got := capacity(10); got != "" {
		t.Errorf("capacity(10) = %q, want none", got)
	}
}
