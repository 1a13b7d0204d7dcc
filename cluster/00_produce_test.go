package cluster_test

import (
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/segment/segmenttest"
)

// produceAll sends one record to topic/0 with acks=all and the given
// timeout, and returns the partition's error code and how long the
// answer took.
func produceAll(t *testing.T, c *kgo.Client, topic string, timeoutMs int32) (int16, time.Duration) {
	t.Helper()
	pr := kmsg.NewPtrProduceRequest()
	pr.Acks, pr.TimeoutMillis = -1, timeoutMs
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = segmenttest.Batch(t, 1, 10, 1, time.Now().UnixMilli())
	rt.Partitions = append(rt.Partitions, rp)
	pr.Topics = append(pr.Topics, rt)
	start := time.Now()
	resp, err := pr.RequestWith(ctx(t), c)
	if err != nil {
		t.Errorf("produce: %v", err) // may run on a goroutine of its own
		return -1, 0
	}
	return resp.Topics[0].Partitions[0].ErrorCode, time.Since(start)
}

// Kafka: acks=all parks in DelayedProduce until the high watermark
// passes the last offset appended; here the high watermark is held back
// as an in-sync follower that has not fetched yet would hold it.
func TestAcksAllWaitsForTheHighWatermark(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "isr", 1, nil)
	part := b.PartitionReplica("isr", 0)
	part.SetFollowerEndOffset(0)
	c := client(t, b.addr)
	type result struct {
		code int16
		took time.Duration
	}
	done := make(chan result, 1)
	go func() {
		code, took := produceAll(t, c, "isr", 30000)
		done <- result{code, took}
	}()
	waitParked(t, b, 1)
	if part.EndOffset() != 1 || part.HighWatermark() != 0 {
		t.Fatalf("end offset %d, high watermark %d", part.EndOffset(), part.HighWatermark())
	}
	select {
	case r := <-done:
		t.Fatalf("answered (%d) before the high watermark moved", r.code)
	case <-time.After(200 * time.Millisecond):
	}
	part.SetFollowerEndOffset(math.MaxInt64) // the follower caught up
	select {
	case r := <-done:
		if r.code != 0 {
			t.Fatalf("error %d", r.code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not answered after the high watermark passed the record")
	}
}

// Kafka: DelayedProduce answers REQUEST_TIMED_OUT at the request's
// timeout, and NOT_LEADER_OR_FOLLOWER when leadership is lost meanwhile.
func TestAcksAllTimesOutOrLosesLeadership(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "slow", 1, nil)
	part := b.PartitionReplica("slow", 0)
	part.SetFollowerEndOffset(0)
	c := client(t, b.addr)
	code, took := produceAll(t, c, "slow", 300)
	if code != kerr.RequestTimedOut.Code || took < 300*time.Millisecond {
		t.Fatalf("error %d after %v, want REQUEST_TIMED_OUT after 300 ms", code, took)
	}
	done := make(chan int16, 1)
	go func() {
		code, _ := produceAll(t, c, "slow", 30000)
		done <- code
	}()
	waitParked(t, b, 1)
	part.ResignLeadership()
	select {
	case code := <-done:
		if code != kerr.NotLeaderForPartition.Code {
			t.Fatalf("error %d, want NOT_LEADER_OR_FOLLOWER", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not answered when leadership was lost")
	}
}
