package replica_test

import (
	"slices"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

// Kafka: markers are appended by the leader with AppendOrigin.COORDINATOR
// and requiredAcks=-1, and followers replicate them as any batch: each
// follower's producer state ends the transaction and its transaction
// index gets the ABORT's entry, so after a failover the new leader
// serves read_committed fetches the same way.
func TestTxnMarkersReplicateToFollowers(t *testing.T) {
	c := newCluster3(t)
	c.elect(1, 1, 2, 3)
	for _, m := range c.ms {
		m.Start(c, c)
	}
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(42, 0, 0)
	bb.SetTransactional(true)
	bb.Append(record.Record{Value: []byte("t1")})
	bb.Append(record.Record{Value: []byte("t2")})
	batch, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	leader := c.part(1)
	if _, err := leader.AppendRecordsToLeader(batch, 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.produce(1, -1, "plain"); err != nil { // offset 2, acknowledged by all
		t.Fatal(err)
	}
	if lso := leader.LastStableOffset(); lso != 0 {
		t.Fatalf("leader LSO with the transaction open = %d, want 0", lso)
	}
	marker, err := segment.BuildTxnMarker(segment.TxnMarker{ProducerID: 42, CoordinatorEpoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	info, err := leader.AppendTxnMarkersToLeader(marker, 2)
	if err != nil {
		t.Fatal(err)
	}
	pur := replica.NewPurgatory(replica.PurgatoryConfig{})
	defer pur.Close()
	done := make(chan error, 1)
	d := replica.NewDelayedProduce([]replica.ProducePartition{{Partition: leader, RequiredOffset: info.LastOffset + 1}}, nil,
		func(parts []replica.ProducePartition) { done <- parts[0].Err })
	pur.Watch(d, 10*time.Second, d.Keys()...)
	if err := <-done; err != nil {
		t.Fatalf("marker acks: %v", err)
	}
	want := []segment.AbortedTxn{{ProducerID: 42, FirstOffset: 0, LastOffset: 3, LastStableOffset: 4}}
	for id := int32(1); id <= 3; id++ {
		p := c.part(id)
		c.waitFor("the marker on every replica", func() bool { return p.EndOffset() == 4 && p.HighWatermark() == 4 })
		if got := p.AbortedTransactions(0, 4); !slices.Equal(got, want) {
			t.Fatalf("node %d: aborted transactions %+v, want %+v", id, got, want)
		}
		if lso := p.LastStableOffset(); lso != 4 {
			t.Fatalf("node %d: LSO %d, want 4", id, lso)
		}
	}
	if _, err := c.part(2).AppendTxnMarkersToLeader(marker, 2); err == nil {
		t.Fatal("a follower appended a marker")
	}
}
