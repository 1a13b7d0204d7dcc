package main

import (
	"os"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestParseFlagsQuickIsScaleOneQuarterSize(t *testing.T) {
	c, err := parseFlags([]string{"-quick"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.scales, []int{1}) || c.size != 0.25 || len(c.attacks) != len(attackNames()) {
		t.Fatalf("-quick: scales %v size %v attacks %v", c.scales, c.size, c.attacks)
	}
	if c.ceiling != 2<<30 || c.killAt != 3<<30 {
		t.Fatalf("ceiling %d kill-at %d", c.ceiling, c.killAt)
	}
	if _, err := parseFlags([]string{"-attacks", "partial-frames,nonsense"}); err == nil {
		t.Fatal("an unknown attack was accepted")
	}
}

func TestEveryAttackIsRegistered(t *testing.T) {
	for _, name := range attackNames() {
		if attacks[name] == nil {
			t.Errorf("attack %s has no function", name)
		}
	}
	if len(attacks) != len(attackNames()) {
		t.Errorf("%d attacks registered, %d named", len(attacks), len(attackNames()))
	}
}

func TestRSSOfThisProcess(t *testing.T) {
	rss, err := rssOf(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Fatalf("rssOf(self) = %d, %v", rss, err)
	}
	if _, err := parseKB("12 MB"); err == nil {
		t.Fatal("a field without kB was accepted")
	}
}

func TestTargetCountScalesAndNeverDropsToZero(t *testing.T) {
	for _, c := range []struct {
		n    float64
		k    int
		want int
	}{{1, 24, 24}, {10, 24, 240}, {0.25, 24, 6}, {0.25, 2, 1}, {0.01, 4, 1}} {
		if got := (target{n: c.n}).count(c.k); got != c.want {
			t.Errorf("count(%d) at %v = %d, want %d", c.k, c.n, got, c.want)
		}
	}
}

func TestWatchKeepsPeak(t *testing.T) {
	w := &watch{}
	for _, v := range []int64{5, 9, 3} {
		w.observe(v)
	}
	if w.peak.Load() != 9 {
		t.Fatalf("peak %d, want 9", w.peak.Load())
	}
}

// The fetch the amplification attack sends is the 6 MB request of the
// finding: one partition named 400,000 times.
func TestFetchAmplificationRequestSize(t *testing.T) {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(4)
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "amp"
	ft.Partitions = make([]kmsg.FetchRequestTopicPartition, 400_000)
	req.Topics = []kmsg.FetchRequestTopic{ft}
	if n := len(req.AppendTo(nil)); n < 6_000_000 || n > 7_000_000 {
		t.Fatalf("request of %d bytes", n)
	}
}
