package replica

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

var testPartitions int

// newTestPartition opens a partition on an empty log in a temporary
// directory, leading, its high watermark at the log end.
func newTestPartition(tb testing.TB) *Partition {
	tb.Helper()
	testPartitions++
	tp := segment.TopicPartition{Topic: "t", Partition: int32(testPartitions)}
	l, err := segment.Open(filepath.Join(tb.TempDir(), tp.String()), logConfig(1<<20, 0))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return NewPartition(tp, TopicID{1}, l, 0)
}

func appendRecords(tb testing.TB, p *Partition, n int) {
	tb.Helper()
	if _, err := p.AppendAsLeader(segmenttest.Batch(tb, n, 100, int64(n), 0)); err != nil {
		tb.Fatal(err)
	}
}

// fetchResult records a delayed fetch's completion.
type fetchResult struct {
	done, expired bool
}

func parkFetch(t *testing.T, pg *Purgatory, minBytes int32, wait time.Duration, online func(*Partition) bool, parts ...*Partition) *fetchResult {
	t.Helper()
	res := &fetchResult{}
	f := &DelayedFetch{MinBytes: minBytes, MaxBytes: 1 << 20, Online: online,
		Complete: func(expired bool) { *res = fetchResult{true, expired} }}
	for _, p := range parts {
		f.Parts = append(f.Parts, FetchPartition{Partition: p, Offset: p.EndOffset(), MaxBytes: 1 << 20})
	}
	pg.Watch(f, wait, f.Keys()...)
	return res
}

// Kafka: DelayedFetch completes once the bytes accumulated across its
// partitions reach fetch.min.bytes; an append short of it does not.
func TestDelayedFetchCompletesAtMinBytes(t *testing.T) {
	pg, _ := newManualPurgatory(t, false)
	a, b := newTestPartition(t), newTestPartition(t)
	res := parkFetch(t, pg, 1500, time.Minute, nil, a, b)
	appendRecords(t, a, 5) // about 700 bytes
	if res.done {
		t.Fatal("completed below min.bytes")
	}
	appendRecords(t, b, 8) // with a's, over 1500
	if !res.done || res.expired {
		t.Fatalf("after enough bytes across partitions: %+v", *res)
	}
}

// Kafka: the bytes counted stop at the high watermark: an append that
// followers have not acknowledged wakes no consumer fetch, the advance
// of the high watermark does.
func TestDelayedFetchWaitsForHighWatermark(t *testing.T) {
	pg, _ := newManualPurgatory(t, false)
	p := newTestPartition(t)
	p.SetFollowerEndOffset(0)
	res := parkFetch(t, pg, 1, time.Minute, nil, p)
	appendRecords(t, p, 3)
	if res.done || p.HighWatermark() != 0 {
		t.Fatalf("completed (%v) with the high watermark held at %d", res.done, p.HighWatermark())
	}
	p.SetFollowerEndOffset(3)
	if !res.done || res.expired || p.HighWatermark() != 3 {
		t.Fatalf("high watermark %d, fetch %+v", p.HighWatermark(), *res)
	}
}

// Kafka: DelayedFetch.tryComplete cases A, B and F: a partition deleted,
// a leadership lost, or a fetch offset past the high watermark
// (truncation) answer at once; max.wait.ms answers with what there is.
func TestDelayedFetchCompletesEarlyOrOnExpiry(t *testing.T) {
	pg, clk := newManualPurgatory(t, false)
	deleted, resigned, expiring := newTestPartition(t), newTestPartition(t), newTestPartition(t)
	gone := false
	online := func(p *Partition) bool { return p != deleted || !gone }
	r1 := parkFetch(t, pg, 1, time.Minute, online, deleted)
	r2 := parkFetch(t, pg, 1, time.Minute, online, resigned)
	r3 := parkFetch(t, pg, 1, 500*time.Millisecond, online, expiring)
	gone = true
	deleted.wake() // what the log manager's deletion does
	resigned.ResignLeadership()
	if !r1.done || r1.expired || !r2.done || r2.expired || r3.done {
		t.Fatalf("deleted %+v, resigned %+v, untouched %+v", *r1, *r2, *r3)
	}
	pg.Advance(clk.Add(500 * time.Millisecond))
	if !r3.done || !r3.expired {
		t.Fatalf("at max.wait.ms: %+v", *r3)
	}
	ahead := newTestPartition(t)
	f := &DelayedFetch{MinBytes: 1, Parts: []FetchPartition{{Partition: ahead, Offset: 7, MaxBytes: 100}}, Complete: func(bool) {}}
	if !pg.Watch(f, time.Minute, f.Keys()...) {
		t.Fatal("a fetch offset past the high watermark did not answer at once")
	}
}

func parkProduce(t *testing.T, pg *Purgatory, timeout time.Duration, online func(*Partition) bool, parts ...*Partition) *[]error {
	t.Helper()
	var got *[]error = new([]error)
	var pps []ProducePartition
	for _, p := range parts {
		pps = append(pps, ProducePartition{Partition: p, RequiredOffset: p.EndOffset()})
	}
	d := NewDelayedProduce(pps, online, func(done []ProducePartition) {
		for _, pp := range done {
			*got = append(*got, pp.Err)
		}
	})
	pg.Watch(d, timeout, d.Keys()...)
	return got
}

// Kafka: DelayedProduce (acks=all) completes when the high watermark of
// every partition reaches the offset after its last appended record.
func TestDelayedProduceCompletesWhenHighWatermarkPasses(t *testing.T) {
	pg, _ := newManualPurgatory(t, false)
	a, b := newTestPartition(t), newTestPartition(t)
	a.SetFollowerEndOffset(0)
	b.SetFollowerEndOffset(0)
	appendRecords(t, a, 4)
	appendRecords(t, b, 2)
	got := parkProduce(t, pg, time.Minute, nil, a, b)
	a.SetFollowerEndOffset(4)
	b.SetFollowerEndOffset(1)
	if len(*got) != 0 {
		t.Fatalf("completed with b's high watermark short of its last offset: %v", *got)
	}
	b.SetFollowerEndOffset(2)
	if fmt.Sprint(*got) != "[<nil> <nil>]" {
		t.Fatalf("outcomes %v", *got)
	}
}

// Kafka: DelayedProduce.onExpiration: the partitions still waiting at
// the request timeout answer REQUEST_TIMED_OUT; those acknowledged
// answer NONE.
func TestDelayedProduceTimesOut(t *testing.T) {
	pg, clk := newManualPurgatory(t, true)
	a, b := newTestPartition(t), newTestPartition(t)
	b.SetFollowerEndOffset(0)
	appendRecords(t, a, 1)
	appendRecords(t, b, 1)
	got := parkProduce(t, pg, 30*time.Second, nil, a, b)
	pg.Advance(clk.Add(29999 * time.Millisecond))
	if len(*got) != 0 {
		t.Fatal("answered before request.timeout.ms")
	}
	pg.Advance(clk.Add(time.Millisecond))
	if len(*got) != 2 || (*got)[0] != nil || !errors.Is((*got)[1], kerr.RequestTimedOut) {
		t.Fatalf("outcomes %v", *got)
	}
}

// Kafka: a leader that becomes a follower answers its delayed produces
// NOT_LEADER_OR_FOLLOWER; a deleted partition UNKNOWN_TOPIC_OR_PARTITION.
func TestDelayedProduceLeadershipLost(t *testing.T) {
	pg, _ := newManualPurgatory(t, false)
	a, b := newTestPartition(t), newTestPartition(t)
	a.SetFollowerEndOffset(0)
	b.SetFollowerEndOffset(0)
	appendRecords(t, a, 1)
	appendRecords(t, b, 1)
	gone := false
	got := parkProduce(t, pg, time.Minute, func(p *Partition) bool { return p != b || !gone }, a, b)
	a.ResignLeadership()
	if len(*got) != 0 {
		t.Fatal("answered while b still waits")
	}
	gone = true
	b.wake()
	if len(*got) != 2 || !errors.Is((*got)[0], kerr.NotLeaderForPartition) || !errors.Is((*got)[1], kerr.UnknownTopicOrPartition) {
		t.Fatalf("outcomes %v", *got)
	}
}

// A delayed operation watches each of its partitions once, however many
// times it names them, below and above the size where a map takes over.
func TestDelayedKeysAreDistinct(t *testing.T) {
	parts := make([]*Partition, 12)
	for i := range parts {
		parts[i] = &Partition{}
	}
	for _, n := range []int{3, 12} {
		f := &DelayedFetch{}
		for i := range 3 * n {
			f.Parts = append(f.Parts, FetchPartition{Partition: parts[i%n]})
		}
		if keys := f.Keys(); len(keys) != n {
			t.Fatalf("%d partitions named thrice: %d keys", n, len(keys))
		}
	}
}

// logConfig is Kafka's defaults with a smaller segment (and index, when
// indexBytes > 0).
func logConfig(segmentBytes int64, indexBytes int) segment.Config {
	c := segment.DefaultConfig()
	c.SegmentBytes = segmentBytes
	if indexBytes > 0 {
		c.SegmentIndexBytes = indexBytes
	}
	return c
}
