package quorum

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkCommitRate measures the metadata records per second the
// quorum commits: three nodes in this process on loopback, each entry
// durable in its node's raftlog before it counts, CreateTopics through
// the Client to the active controller (one TopicRecord and one
// PartitionRecord per partition: 2, 11 or 101 records an entry), one
// request at a time or from 8 clients at once. An op is one committed
// and applied entry; records/s is the figure.
//
//	go test -run '^$' -bench CommitRate -benchtime 200x ./quorum
func BenchmarkCommitRate(b *testing.B) {
	for _, partitions := range []int32{1, 10, 100} {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("records=%d/clients=%d", partitions+1, clients), func(b *testing.B) {
				benchCommitRate(b, partitions, clients)
			})
		}
	}
}

func benchCommitRate(b *testing.B, partitions int32, clients int) {
	c := newTestCluster(b, 64<<20)
	c.active(10 * time.Second)
	c.waitUnfenced(10 * time.Second)
	cls := make([]*Client, clients)
	for i := range cls {
		cls[i] = c.nodes[0].Client()
		if i > 0 {
			cls[i] = newClient(&c.nodes[0].cfg, c.nodes[0].Leader)
			defer cls[i].Close()
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, clients)
	b.ResetTimer()
	for i, cl := range cls {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				if err := createOne(cl, fmt.Sprintf("bench-%d", n), partitions); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(partitions+1)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// createOne creates a topic of partitions partitions, replication
// factor 3, through cl.
func createOne(cl *Client, name string, partitions int32) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 3
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := cl.Do(ctx, req)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	return nil
}

// BenchmarkPublish measures, with size partitions already in the
// image, the time from the active controller's answer to a CreateTopics
// of one partition until every node's Publisher holds the topic: the
// quorum's part of metadata propagation, without a broker (no replica
// manager, no Metadata round trip). Three nodes in this process. An op
// is one topic created and seen by all three.
//
//	go test -run '^$' -bench Publish -benchtime 30x ./quorum
func BenchmarkPublish(b *testing.B) {
	for _, size := range []int{10, 1_000, 100_000} {
		b.Run(fmt.Sprintf("partitions=%d", size), func(b *testing.B) { benchPublish(b, size) })
	}
}

func benchPublish(b *testing.B, size int) {
	c := newTestCluster(b, 64<<20)
	leader := c.active(10 * time.Second)
	c.waitUnfenced(10 * time.Second)
	cl := c.nodes[leader].Client()
	per := int32(min(size, 1000))
	for i := range size / int(per) {
		// Under load a broker's 1 s session may lapse while the image
		// grows: wait for it to be unfenced again and retry.
		for try := 0; ; try++ {
			err := createOne(cl, fmt.Sprintf("base-%d", i), per)
			if err == nil || try > 0 && errors.Is(err, kerr.TopicAlreadyExists) {
				break // (a retried request that had committed)
			}
			if !errors.Is(err, kerr.InvalidReplicationFactor) || try == 10 {
				b.Fatal(err)
			}
			c.waitUnfenced(10 * time.Second)
		}
	}
	var worst, total time.Duration
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("probe-%d", i)
		if err := createOne(cl, name, 1); err != nil {
			b.Fatal(err)
		}
		answered := time.Now()
		for _, n := range c.nodes {
			for {
				if _, ok := n.Publisher().Image().Topic(name); ok {
					break
				}
				time.Sleep(20 * time.Microsecond)
			}
		}
		d := time.Since(answered)
		total, worst = total+d, max(worst, d)
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-to-all/op")
	b.ReportMetric(float64(worst.Microseconds()), "µs-worst")
}
