package replica_test

import (
	"errors"
	"testing"
	"time"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/record"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// memLog is an in-memory replica.Log: a partition's rules are checked
// without a disk.
type memLog struct {
	batches [][]byte
	start   int64
	end     int64
	fail    error
}

func (l *memLog) AppendWithEpoch(b []byte, epoch int32) (segment.AppendInfo, error) {
	if l.fail != nil {
		return segment.AppendInfo{}, l.fail
	}
	h, err := record.ParseHeader(b)
	if err != nil {
		return segment.AppendInfo{}, err
	}
	info := segment.AppendInfo{FirstOffset: l.end, LastOffset: l.end + int64(h.LastOffsetDelta), Batches: 1, Bytes: len(b)}
	l.end = info.LastOffset + 1
	l.batches = append(l.batches, b)
	return info, nil
}

func (l *memLog) ReadBounded(offset int64, maxBytes int, upTo int64, _ bool) (pagecache.Region, error) {
	if offset > upTo {
		return pagecache.Region{}, segment.ErrOffsetOutOfRange
	}
	return pagecache.Region{Len: upTo - offset}, nil // Len counts offsets here
}

func (l *memLog) AppendReplicated(b []byte) (segment.AppendInfo, error) {
	h, err := record.ParseHeader(b)
	if err != nil {
		return segment.AppendInfo{}, err
	}
	l.end = h.NextOffset()
	l.batches = append(l.batches, b)
	return segment.AppendInfo{FirstOffset: h.BaseOffset, LastOffset: h.NextOffset() - 1, Batches: 1, Bytes: len(b)}, nil
}

func (l *memLog) TruncateTo(o int64) error { l.end = min(l.end, o); return nil }

func (l *memLog) TruncateFullyAndStartAt(o int64) error {
	l.batches, l.start, l.end = nil, o, o
	return nil
}

func (l *memLog) ReadBytes(int64, int) ([]byte, error) { return nil, nil }
func (l *memLog) StartOffset() int64                   { return l.start }
func (l *memLog) EndOffset() int64                     { return l.end }
func (l *memLog) SetStartOffset(o int64) error         { l.start = max(l.start, o); return nil }
func (l *memLog) Segments() []segment.SegmentInfo      { return nil }
func (l *memLog) OffsetForTime(int64) (int64, int64, bool, error) {
	return 0, 0, false, nil
}

// Kafka: Partition.maybeIncrementLeaderHW: a single replica's high
// watermark follows its appends and never moves back; a failed append
// leaves it where it was; reads stop at it; DeleteRecords cannot pass it.
func TestHighWatermarkRulesOnAMemoryLog(t *testing.T) {
	l := &memLog{end: 10}
	p := replica.NewPartition(tp("m", 0), replica.TopicID{1}, l, 25) // clamped to the end
	if p.HighWatermark() != 10 {
		t.Fatalf("hw %d, want the log end 10", p.HighWatermark())
	}
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 4, 10, 1, 0)); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 14 {
		t.Fatalf("hw %d after 4 records, want 14", p.HighWatermark())
	}
	l.fail = errors.New("disk gone")
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 4, 10, 2, 0)); err == nil || p.HighWatermark() != 14 {
		t.Fatalf("failed append: err %v, hw %d", err, p.HighWatermark())
	}
	if r, _ := p.Read(12, 1<<20, true); r.Len != 2 {
		t.Fatalf("read reached %d offsets past 12, want 2 (stops at the hw)", r.Len)
	}
	if _, err := p.DeleteRecordsBefore(15); !errors.Is(err, segment.ErrOffsetOutOfRange) {
		t.Fatalf("delete past the hw: %v", err)
	}
	if start, err := p.DeleteRecordsBefore(-1); err != nil || start != 14 {
		t.Fatalf("delete up to the hw: %d %v", start, err)
	}
}

// Kafka: a partition whose log directory failed answers
// KAFKA_STORAGE_ERROR (logdir.ErrOffline) to appends and reads; Varve
// brings it back when its directory's probe succeeds, with the high
// watermark and the data it had, and wakes fetches at both changes.
func TestPartitionOfflineAndBack(t *testing.T) {
	fault := segmenttest.NewFaultFS()
	m, err := replica.Open(logdir.Config{
		LogDirs: []string{t.TempDir()}, FS: fault, ProbeInterval: 20 * time.Millisecond,
		LogConfig: func(string) segment.Config { c := segment.DefaultConfig(); c.FlushMessages = 1; return c },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p, _ := m.CreatePartition(tp("off", 0), replica.TopicID{5})
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 3, 10, 1, 0)); err != nil {
		t.Fatal(err)
	}
	wait := p.Wait()
	fault.CutWritesAfter(0)
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 3, 10, 2, 0)); err == nil {
		t.Fatal("append on a full disk succeeded")
	}
	waitFor(t, "the partition to go offline", func() bool { return !p.Online() })
	select {
	case <-wait:
	default:
		t.Fatal("going offline did not wake waiting fetches")
	}
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 1, 10, 3, 0)); !errors.Is(err, logdir.ErrOffline) {
		t.Fatalf("append while offline: %v", err)
	}
	if _, err := p.Read(0, 100, true); !errors.Is(err, logdir.ErrOffline) {
		t.Fatalf("read while offline: %v", err)
	}
	if len(m.OfflineDirs()) != 1 {
		t.Fatalf("offline dirs %v", m.OfflineDirs())
	}
	fault.CutWritesAfter(-1)
	waitFor(t, "the partition to come back", p.Online)
	if p.HighWatermark() != 3 || p.EndOffset() != 3 {
		t.Fatalf("back with hw %d end %d, want 3", p.HighWatermark(), p.EndOffset())
	}
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 2, 10, 4, 0)); err != nil || p.HighWatermark() != 5 {
		t.Fatalf("append after coming back: %v, hw %d", err, p.HighWatermark())
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
