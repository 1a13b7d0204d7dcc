package replica_test

import (
	"context"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/replica"
)

// fakeClock is a quota's clock a test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newQuota(c *fakeClock) *replica.ReplicationQuota {
	return replica.NewReplicationQuota(replica.QuotaConfig{Samples: 11, Window: time.Second, Now: c.now})
}

// Kafka: ReplicationQuotaManagerTest.shouldExceedQuotaThenReturnBackBelowBoundAsTimePasses.
// The rate is a SimpleRate: bytes over the time since the oldest sample
// began, at least one window; a rate equal to the bound is within it.
func TestReplicationQuotaExceededThenBackBelowBound(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e6, 0)}
	q := newQuota(clk)
	q.Record(1 << 30)
	if q.Exceeded() {
		t.Fatal("an unbounded quota (Kafka's Long.MAX_VALUE default) is exceeded")
	}
	q = newQuota(clk)
	q.SetBound(100)
	q.Record(100)
	if q.Exceeded() {
		t.Fatal("100 bytes in the first 1s window exceed a 100 B/s bound")
	}
	q.Record(1)
	if !q.Exceeded() {
		t.Fatal("101 bytes in the first 1s window do not exceed a 100 B/s bound")
	}
	clk.advance(900 * time.Millisecond) // still the first window: 101 B/s
	if !q.Exceeded() {
		t.Fatal("not exceeded within the first window")
	}
	clk.advance(200 * time.Millisecond) // 101 bytes over 1.1 s
	if q.Exceeded() {
		t.Fatalf("rate %.1f B/s still exceeded after 1.1 s", q.Rate())
	}
	q.SetBound(50)
	if !q.Exceeded() {
		t.Fatal("a lower bound is not applied at once")
	}
	q.SetBound(replica.Unbounded)
	if q.Exceeded() {
		t.Fatal("lifting the bound leaves it exceeded")
	}
}

// Kafka: ReplicationQuotaManagerTest.shouldSupportWildcardThrottledReplicas
// and markThrottled/removeThrottle: a topic's list replaces the last one.
func TestReplicationQuotaThrottledReplicas(t *testing.T) {
	q := newQuota(&fakeClock{t: time.Unix(0, 0)})
	q.MarkThrottled("a", false, []int32{0, 2})
	q.MarkThrottled("b", true, nil)
	want := map[string]bool{"a/0": true, "a/1": false, "a/2": true, "b/0": true, "b/7": true, "c/0": false}
	check := func() {
		t.Helper()
		for k, w := range want {
			var topic string
			var p int32
			if k[0] == 'a' || k[0] == 'b' || k[0] == 'c' {
				topic, p = k[:1], int32(k[2]-'0')
			}
			if got := q.IsThrottled(tp(topic, p)); got != w {
				t.Errorf("IsThrottled(%s) = %v, want %v", k, got, w)
			}
		}
	}
	check()
	q.MarkThrottled("a", false, []int32{1})
	want["a/0"], want["a/1"], want["a/2"] = false, true, false
	check()
	q.MarkThrottled("b", false, nil) // an empty list lifts the topic's throttle
	q.RemoveThrottle("a")
	want["a/1"], want["b/0"], want["b/7"] = false, false, false
	check()
}

// Kafka: ReplicaManager.shouldLeaderThrottle and KafkaApis'
// sizeOfThrottledPartitions. While the leader's quota is exceeded a
// throttled follower outside the ISR is answered with no records (its
// fetch still counts), an in-sync one is not held back, and every
// throttled partition's bytes are recorded.
func TestLeaderQuotaHoldsBackFollowersOutOfTheISR(t *testing.T) {
	c := newCluster3(t)
	c.elect(1, 1, 2) // 3 is out of the ISR
	if _, err := c.part(1).AppendRecordsToLeader(batchOf(t, "v0", "v1"), 1, 1); err != nil {
		t.Fatal(err)
	}
	leader := c.ms[1]
	fetch := func(replicaID int32) int {
		rs := leader.ServeReplicaFetch(context.Background(), replica.ReplicaFetch{ReplicaID: replicaID, MinBytes: 1, MaxBytes: 1 << 20,
			Partitions: []replica.ReplicaFetchPartition{{TP: c.tp, FetchOffset: 0, LastFetchedEpoch: -1,
				CurrentLeaderEpoch: c.part(1).LeaderEpoch(), MaxBytes: 1 << 20}}})
		if len(rs) != 1 || rs[0].Err != nil {
			t.Fatalf("fetch of %d: %+v", replicaID, rs)
		}
		return len(rs[0].Records)
	}
	q := leader.LeaderQuota()
	q.MarkThrottled(c.tp.Topic, true, nil)
	n := fetch(2)
	if n == 0 || q.Rate() == 0 {
		t.Fatalf("in-sync follower got %d bytes, rate %.0f: its throttled bytes must be served and counted", n, q.Rate())
	}
	q.SetBound(1) // the bytes just served exceed it
	if fetch(3) != 0 {
		t.Error("a throttled follower outside the ISR got records while the quota is exceeded")
	}
	if !q.LeaderThrottles(c.part(1), 3) || q.LeaderThrottles(c.part(1), 2) {
		t.Error("LeaderThrottles: want out-of-ISR 3 held back, in-sync 2 not")
	}
	if fetch(2) != n {
		t.Error("an in-sync follower was held back")
	}
	q.RemoveThrottle(c.tp.Topic)
	if fetch(3) != n {
		t.Error("follower 3 still held back once its replica is no longer throttled")
	}
}

// Kafka: RemoteLeaderEndPoint.shouldFollowerThrottle. While the
// follower's quota is exceeded, a throttled partition that is not in
// sync is left out of the fetch; once it has caught up it is fetched
// whatever the quota.
func TestFollowerQuotaLeavesThrottledPartitionsOut(t *testing.T) {
	c := newCluster3(t)
	q := c.ms[3].FollowerQuota()
	q.MarkThrottled(c.tp.Topic, false, []int32{c.tp.Partition})
	q.SetBound(1)
	q.Record(1 << 20) // exceeded for the 11 s the samples remember
	c.elect(1, 1, 2, 3)
	for _, m := range c.ms {
		m.Start(c, c)
	}
	if err := c.produce(1, 1, "a0"); err != nil {
		t.Fatal(err)
	}
	c.waitFor("follower 2 to fetch a0", func() bool { return c.part(2).EndOffset() == 1 })
	time.Sleep(200 * time.Millisecond) // many fetch rounds (replica.fetch.wait.max.ms is 50 ms here)
	if end := c.part(3).EndOffset(); end != 0 {
		t.Fatalf("throttled follower 3 fetched up to %d while over its quota", end)
	}
	q.SetBound(replica.Unbounded)
	c.waitFor("follower 3 to fetch a0 once the bound is lifted", func() bool { return c.part(3).EndOffset() == 1 })
	q.SetBound(1) // exceeded again, but 3 is now in sync
	if err := c.produce(1, 1, "a1"); err != nil {
		t.Fatal(err)
	}
	c.waitFor("in-sync follower 3 to fetch a1 over its quota", func() bool { return c.part(3).EndOffset() == 2 })
}

// batchOf is one batch holding values.
func batchOf(t *testing.T, values ...string) []byte {
	t.Helper()
	b := record.NewBatchBuilder(record.CompressionNone)
	for _, v := range values {
		b.Append(record.Record{Value: []byte(v)})
	}
	batch, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return batch
}

// Kafka: SampledStat makes its first sample at the first record, so a
// quota idle since its creation does not spread a burst over that idle
// time.
func TestReplicationQuotaMeasuresFromTheFirstRecord(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e6, 0)}
	q := newQuota(clk)
	q.SetBound(1000)
	clk.advance(5 * time.Second)
	q.Record(2000)
	if !q.Exceeded() {
		t.Fatalf("2000 bytes at once exceed 1000 B/s: rate %.0f measured over the idle time before them", q.Rate())
	}
}
