package retention_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

const hour = time.Hour

// Kafka: UnifiedLog.deleteRetentionMsBreachedSegments deletes a segment
// when now - largestTimestamp > retention.ms, oldest first.
func TestRetentionMsDeletesSegmentsOlderThanTheLimit(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0.Add(hour), t0.Add(2*hour), t0.Add(3*hour))
	now := t0.Add(3*hour + 30*time.Minute)
	p := retention.DefaultPolicy()
	p.RetentionMs = 2 * hour // t0 and t0+1h are older than 2 h
	res, err := retention.Enforce(l, p, l.EndOffset(), now)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ByRule[retention.RuleTime]; got != 2 {
		t.Fatalf("retention.ms deleted %d segments, want 2 (%+v)", got, res)
	}
	if want := []int64{20, 30, 40}; !equalInts(bases(l), want) {
		t.Fatalf("segments %v, want %v", bases(l), want)
	}
	if l.StartOffset() != 20 || res.StartOffset != 20 {
		t.Fatalf("log start offset %d (result %d), want 20", l.StartOffset(), res.StartOffset)
	}
}

// Kafka: the comparison is strict (now - largestTimestamp > retention.ms):
// a segment exactly retention.ms old stays.
func TestRetentionMsBoundaryIsStrict(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0.Add(hour))
	p := retention.DefaultPolicy()
	p.RetentionMs = hour
	res, err := retention.Enforce(l, p, l.EndOffset(), t0.Add(hour))
	if err != nil || len(res.Deleted) != 0 {
		t.Fatalf("at exactly retention.ms: deleted %d, err %v; want none", len(res.Deleted), err)
	}
	res, err = retention.Enforce(l, p, l.EndOffset(), t0.Add(hour+time.Millisecond))
	if err != nil || len(res.Deleted) != 1 {
		t.Fatalf("1 ms later: deleted %d, err %v; want 1", len(res.Deleted), err)
	}
}

// Kafka: LogSegment.largestTimestamp falls back to the file's mtime when
// no record carries a timestamp.
func TestRetentionMsUsesModTimeWithoutTimestamps(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	for range 2 {
		if _, err := l.Append(batch(t, 5, 10, -1)); err != nil {
			t.Fatal(err)
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	segs := l.Segments()
	old := time.Now().Add(-10 * 24 * hour)
	if err := os.Chtimes(segs[0].Path, old, old); err != nil {
		t.Fatal(err)
	}
	res, err := retention.Enforce(l, retention.DefaultPolicy(), l.EndOffset(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 1 || res.Deleted[0].BaseOffset != 0 {
		t.Fatalf("deleted %+v, want only the segment whose mtime is 10 days old", res.Deleted)
	}
}

// Kafka: deleteRetentionSizeBreachedSegments: diff = size -
// retention.bytes, and a segment goes while diff - segment.size >= 0.
func TestRetentionBytesKeepsTheLogAtLeastThatLarge(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0, t0, t0, t0)
	segSize := l.Segments()[0].Size
	// 5 segments; a limit of 2.5 segments lets exactly 2 go (3 remain).
	p := retention.DefaultPolicy()
	p.RetentionBytes = 5*segSize/2 + 1
	p.RetentionMs = retention.Unlimited
	res, err := retention.Enforce(l, p, l.EndOffset(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.ByRule[retention.RuleSize] != 2 || res.Bytes != 2*segSize {
		t.Fatalf("retention.bytes deleted %d segments / %d bytes, want 2 / %d", res.ByRule[retention.RuleSize], res.Bytes, 2*segSize)
	}
	if l.Size() < p.RetentionBytes {
		t.Fatalf("log is %d bytes after retention, below retention.bytes=%d", l.Size(), p.RetentionBytes)
	}
}

// Kafka: if size < retention.bytes the rule does nothing.
func TestRetentionBytesUnderLimitDeletesNothing(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0)
	p := retention.DefaultPolicy()
	p.RetentionBytes = l.Size() + 1
	p.RetentionMs = retention.Unlimited
	if res, err := retention.Enforce(l, p, l.EndOffset(), t0); err != nil || len(res.Deleted) != 0 {
		t.Fatalf("deleted %d, err %v; want nothing", len(res.Deleted), err)
	}
}

// Kafka: deleteLogStartOffsetBreachedSegments removes a segment when the
// next one starts at or below the log start offset, and it is the only
// rule that runs for cleanup.policy=compact (KAFKA-7400).
func TestStartOffsetRuleRunsAloneForCompactPolicy(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0, t0, t0)
	if err := l.SetStartOffset(25); err != nil { // inside the third segment
		t.Fatal(err)
	}
	p := retention.DefaultPolicy()
	p.CleanupPolicy = segment.CleanupCompact
	p.RetentionMs = time.Millisecond
	p.RetentionBytes = 1
	res, err := retention.Enforce(l, p, l.EndOffset(), t0.Add(1000*hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.ByRule[retention.RuleStartOffset] != 2 || len(res.Deleted) != 2 {
		t.Fatalf("deleted %v, want the two segments below offset 20 by the start-offset rule only", res.ByRule)
	}
	if want := []int64{20, 30, 40}; !equalInts(bases(l), want) {
		t.Fatalf("segments %v, want %v", bases(l), want)
	}
	if l.StartOffset() != 25 {
		t.Fatalf("log start offset %d, want 25 (never lowered)", l.StartOffset())
	}
}

// Kafka: deleteOldSegments runs start offset, then size, then time; each
// rule counts what it removed.
func TestRulesRunInKafkaOrder(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0, t0, t0.Add(5*hour), t0.Add(5*hour), t0.Add(10*hour), t0.Add(10*hour))
	segSize := l.Segments()[0].Size
	if err := l.SetStartOffset(10); err != nil {
		t.Fatal(err)
	}
	p := retention.Policy{
		CleanupPolicy:  segment.CleanupCompact | segment.CleanupDelete,
		RetentionBytes: 5 * segSize, // 6 left after the start-offset rule: one more goes
		RetentionMs:    6 * hour,    // then the t0 one left goes by time, not the t0+5h ones
	}
	res, err := retention.Enforce(l, p, l.EndOffset(), t0.Add(10*hour))
	if err != nil {
		t.Fatal(err)
	}
	want := map[retention.Rule]int{retention.RuleStartOffset: 1, retention.RuleSize: 1, retention.RuleTime: 1}
	for r, n := range want {
		if res.ByRule[r] != n {
			t.Fatalf("rule %s deleted %d, want %d (all: %v)", r, res.ByRule[r], n, res.ByRule)
		}
	}
	if want := []int64{30, 40, 50, 60, 70}; !equalInts(bases(l), want) {
		t.Fatalf("segments %v, want %v", bases(l), want)
	}
}

// Kafka: each rule stops at the first segment it keeps (prefix only): an
// old segment behind a new one stays.
func TestOnlyAPrefixIsDeleted(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0.Add(10*hour), t0, t0)
	p := retention.DefaultPolicy()
	p.RetentionMs = hour
	res, err := retention.Enforce(l, p, l.EndOffset(), t0.Add(10*hour))
	if err != nil || len(res.Deleted) != 0 {
		t.Fatalf("deleted %d, err %v; want none (the first segment is new)", len(res.Deleted), err)
	}
}

// Kafka: deletableSegments requires highWatermark >= the next segment's
// base (the log end for the last), so uncommitted data never goes.
func TestUpperBoundProtectsUncommittedSegments(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0, t0)
	p := retention.DefaultPolicy()
	p.RetentionMs = hour
	res, err := retention.Enforce(l, p, 19, t0.Add(100*hour)) // HW inside the second segment
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 1 || l.StartOffset() != 10 {
		t.Fatalf("deleted %d segments, start %d; want 1 and 10 (second segment ends past HW 19)", len(res.Deleted), l.StartOffset())
	}
	if _, err := retention.Enforce(l, p, 20, t0.Add(100*hour)); err != nil || l.StartOffset() != 20 {
		t.Fatalf("with HW 20: start %d, err %v; want 20", l.StartOffset(), err)
	}
}

// Kafka: a non-empty active segment that breaches retention is rolled and
// deleted; the new empty active segment is never deleted.
func TestActiveSegmentIsRolledThenDeleted(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0)
	if _, err := l.Append(batch(t, 3, 10, t0.UnixMilli())); err != nil { // active, not empty
		t.Fatal(err)
	}
	end := l.EndOffset()
	p := retention.DefaultPolicy()
	p.RetentionMs = hour
	res, err := retention.Enforce(l, p, end, t0.Add(2*hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 2 {
		t.Fatalf("deleted %d segments, want 2 (the sealed one and the rolled active one)", len(res.Deleted))
	}
	segs := l.Segments()
	if len(segs) != 1 || segs[0].BaseOffset != end || segs[0].Size != 0 || l.StartOffset() != end {
		t.Fatalf("after: segments %+v, start %d; want one empty segment at %d", segs, l.StartOffset(), end)
	}
	p = retention.DefaultPolicy()
	p.RetentionMs = hour
	res, err = retention.Enforce(l, p, end, t0.Add(200*hour))
	if err != nil || len(res.Deleted) != 0 {
		t.Fatalf("second pass deleted %d (err %v); the empty active segment must stay", len(res.Deleted), err)
	}
}

// Kafka: deleted segments are renamed *.deleted and removed after
// file.delete.delay.ms; the log start offset is checkpointed
// (log-start-offset-checkpoint) and survives a reopen.
func TestDeletedFilesAndStartOffsetCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "topic-0")
	cfg := logConfig()
	cfg.FileDeleteDelay = 200 * time.Millisecond
	l := openLog(t, dir, cfg)
	segmentsAt(t, l, t0, t0, t0)
	p := retention.DefaultPolicy()
	p.RetentionMs = hour
	if _, err := retention.Enforce(l, p, 20, t0.Add(2*hour)); err != nil {
		t.Fatal(err)
	}
	if n := countSuffix(t, dir, segment.DeletedSuffix); n != 6 {
		t.Fatalf("%d *.deleted files right after retention, want 6 (2 segments x 3 files)", n)
	}
	cp, err := segment.ReadCheckpoint(nil, filepath.Join(dir, segment.LogStartOffsetCheckpointFile))
	if err != nil || cp[segment.TopicPartition{Topic: "topic", Partition: 0}] != 20 {
		t.Fatalf("log-start-offset-checkpoint = %v (err %v), want topic 0 20", cp, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for countSuffix(t, dir, segment.DeletedSuffix) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := countSuffix(t, dir, segment.DeletedSuffix); n != 0 {
		t.Fatalf("%d *.deleted files left after file.delete.delay.ms", n)
	}
	l.Close()
	l = openLog(t, dir, logConfig())
	defer l.Close()
	if l.StartOffset() != 20 {
		t.Fatalf("reopened log starts at %d, want 20", l.StartOffset())
	}
}

func countSuffix(t *testing.T, dir, suffix string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) {
			n++
		}
	}
	return n
}

// Kafka: retention.bytes=0 deletes every segment below the high
// watermark: diff = size - 0, and each segment goes while diff - its
// size >= 0, the non-empty active segment too (rolled first, so the log
// keeps one empty segment at its end).
func TestRetentionBytesZeroDeletesEverySegment(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0, t0)
	if _, err := l.Append(batch(t, 10, 100, t0.UnixMilli())); err != nil { // the active segment is not empty
		t.Fatal(err)
	}
	p := retention.DefaultPolicy()
	p.RetentionBytes, p.RetentionMs = 0, retention.Unlimited
	res, err := retention.Enforce(l, p, l.EndOffset(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.ByRule[retention.RuleSize] != 4 || l.StartOffset() != 40 || l.Size() != 0 || len(l.Segments()) != 1 {
		t.Fatalf("deleted %d by size; log start %d, size %d, %d segments; want 4, 40, 0, 1",
			res.ByRule[retention.RuleSize], l.StartOffset(), l.Size(), len(l.Segments()))
	}
}

// The zero Policy is not Kafka's defaults: it has no cleanup.policy, and
// Enforce refuses it rather than guess.
func TestZeroPolicyIsRefused(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	if _, err := retention.Enforce(l, retention.Policy{}, l.EndOffset(), t0); !errors.Is(err, retention.ErrInvalidPolicy) {
		t.Fatalf("Enforce with the zero Policy: err %v, want ErrInvalidPolicy", err)
	}
}
