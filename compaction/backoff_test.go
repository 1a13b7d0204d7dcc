package compaction_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/segment"
)

// Kafka's cleaner marks a failing log uncleanable until restart
// (KAFKA-19895); ours retries it, and backs off exponentially so that a
// persistent failure (a corrupt segment, exhausted descriptors) costs
// one error line per backoff: after the first failure the log waits
// UncleanableRetry, after the second twice that.
func TestCleanerBacksOffExponentially(t *testing.T) {
	l := dirtyLog(t, 0, 3)
	defer l.Close()
	corrupt(t, l.Segments()[1])
	now := t0
	var passes int
	var logs bytes.Buffer
	cfg := compaction.DefaultConfig()
	cfg.Logger, cfg.UncleanableRetry = slog.New(slog.NewTextHandler(&logs, nil)), time.Hour
	cfg.Now = func() time.Time { return now }
	cfg.OnClean = func(*segment.Log, compaction.Stats, error) { passes++ }
	c := must[*compaction.Cleaner](t)(compaction.NewCleaner(cfg,
		func() []compaction.Target { return []compaction.Target{{Log: l}} }))
	for _, step := range []struct {
		after  time.Duration
		passes int
	}{
		{0, 1},                 // fails: retry in 1h
		{61 * time.Minute, 2},  // fails again: retry in 2h
		{90 * time.Minute, 2},  // still backing off
		{31 * time.Minute, 3},  // 2h01 after the second failure: retried, 4h next
		{200 * time.Minute, 3}, // still backing off
		{41 * time.Minute, 4},
	} {
		now = now.Add(step.after)
		c.RunOnce(context.Background())
		if passes != step.passes {
			t.Fatalf("at +%v: %d passes, want %d", now.Sub(t0), passes, step.passes)
		}
	}
	if n := strings.Count(logs.String(), "cleaning failed"); n != 4 {
		t.Fatalf("%d failure lines for 4 failed passes:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "retry_after=4h0m0s") || !strings.Contains(logs.String(), "failures=3") {
		t.Fatalf("no doubled retry_after in:\n%s", logs.String())
	}
}
