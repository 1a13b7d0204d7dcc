package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/chaos"
)

// The soak's flags: a seed is kept as given (a replay) or drawn, and
// nonsense is refused.
func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-duration", "3m", "-seed", "42"})
	if err != nil || c.Duration != 3*time.Minute || c.Seed != 42 || c.Partitions != 6 {
		t.Fatalf("got %+v, %v", c, err)
	}
	if c, err := parseFlags(nil); err != nil || c.Seed == 0 || c.Duration != 30*time.Minute {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	if _, err := parseFlags([]string{"-duration", "0s"}); err == nil {
		t.Fatal("a zero duration was taken")
	}
}

// The schedule of a soak fills its duration with every kind of fault
// and every target, and replays from its seed.
func TestScheduleCoversEveryFault(t *testing.T) {
	s := &soak{cfg: config{Duration: 10 * time.Minute, Seed: 7, Partitions: 6}}
	a, b := chaos.NewSchedule(7, s.scheduleOptions()), chaos.NewSchedule(7, s.scheduleOptions())
	if a.String() != b.String() {
		t.Fatal("seed 7 drew two schedules")
	}
	kinds, targets := map[chaos.Kind]bool{}, map[chaos.Target]bool{}
	for _, f := range a.Faults {
		kinds[f.Kind], targets[f.Target] = true, true
	}
	if len(kinds) != 5 || len(targets) != 3 {
		t.Fatalf("kinds %v, targets %v", kinds, targets)
	}
	if last := a.Faults[len(a.Faults)-1]; last.At < s.cfg.Duration {
		t.Fatalf("the schedule ends at %v, before the run's %v", last.At, s.cfg.Duration)
	}
}

// Throughput per second counts acknowledged appends by the second they
// completed, with their latencies, and leaves a second with none empty.
func TestWriteThroughput(t *testing.T) {
	h := chaos.NewHistory()
	for range 3 {
		h.Complete(h.Invoke("p", 0, "v"), 0, nil)
	}
	h.Complete(h.Invoke("p", 0, "x"), 0, errors.New("timed out"))
	path := filepath.Join(t.TempDir(), "throughput.csv")
	if err := writeThroughput(path, h); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != "second,acknowledged,p50_ms,p99_ms" || !strings.HasPrefix(lines[1], "0,3,") {
		t.Fatalf("throughput.csv:\n%s", b)
	}
}

// -quick is a 3-minute run into results/quick/ unless -duration says
// otherwise.
func TestQuickFlag(t *testing.T) {
	c, err := parseFlags([]string{"-quick"})
	if err != nil || !c.Quick || c.Duration != quickDuration {
		t.Fatalf("-quick: %+v, %v", c, err)
	}
	if c, err := parseFlags([]string{"-quick", "-duration", "1m"}); err != nil || c.Duration != time.Minute {
		t.Fatalf("-quick -duration 1m: %+v, %v", c, err)
	}
}

// The soak's plot buckets acknowledged appends by second with their
// p99, marks where faults struck and healed (not other notes), and is
// written as PNG and SVG.
func TestPlotSoak(t *testing.T) {
	h := chaos.NewHistory()
	for range 3 {
		h.Complete(h.Invoke("p", 0, "v"), 0, nil)
	}
	h.Note("kill node1 (leader of partition 0)")
	h.Note("started node1")
	h.Note("kill-at-isr-change (active controller, partition 2)")
	h.Note("healed everything")
	h.Note("preferred-replica elections of soak: <nil>")
	secs := perSecond(h)
	if len(secs) != 1 || secs[0].acked != 3 {
		t.Fatalf("per second: %+v", secs)
	}
	struck, healed := faultTimes(h)
	if len(struck) != 2 || len(healed) != 2 {
		t.Fatalf("struck %v, healed %v", struck, healed)
	}
	dir := t.TempDir()
	if err := plotSoak(dir, h); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"soak.png", "soak.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
