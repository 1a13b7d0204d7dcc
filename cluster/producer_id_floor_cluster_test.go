package cluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/segment"
)

// Kafka: a producer id is never handed out twice (the controller's
// ProducerIdControlManager only moves forward). On a cluster the ids
// come from the controller in blocks (AllocateProducerIds, KIP-730), so
// a partition that node 2 adopted (its log copied in from elsewhere)
// holds producer state the controller never handed out. Node 2 names
// the floor of its logs' producer ids in its registration, and the
// controller moves its next producer id above it before node 2 can
// lead: a producer through node 1 gets an id above the adopted one, and
// its first batch (sequence numbers 0 to 3, as the adopted producer's)
// is appended, not taken for a duplicate of the adopted batch and
// dropped.
func TestThreeNodesAdoptedProducerIDsStayBelowNewOnes(t *testing.T) {
	// A single node writes the partition: its first producer id, 0, the
	// first the cluster's controller would hand out too.
	src := t.TempDir()
	a := startBroker(t, src, nil)
	createTopic(t, a.addr, "adopted", 1, nil)
	produceBatch(t, a.addr, "adopted", "old", 4)
	a.stop(t)

	tc := startQuorumCluster(t, 3, map[string]string{"min.insync.replicas": "1"})
	tc.waitBrokers(3)
	if r := createAssigned(t, client(t, tc.addrs[0]), "adopted", -1, -1, []int32{2}); r.ErrorCode != 0 {
		t.Fatalf("create adopted on node 2: error %d", r.ErrorCode)
	}
	part := filepath.Join(tc.dirs[1], "adopted-0")
	waitWithin(t, 10*time.Second, "node 2's partition of adopted", func() bool {
		_, err := os.Stat(filepath.Join(part, "partition.metadata"))
		return err == nil
	})
	tc.each(tc.stop)
	// Kafka: LogManager.shutdown(brokerEpoch) leaves the node's broker
	// epoch (a registration's metadata offset, after the bootstrap
	// records: above 0) in the marker, for its next registration.
	marker, err := os.ReadFile(filepath.Join(tc.dirs[0], segment.CleanShutdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if epoch, err := segment.ParseCleanShutdown(marker); err != nil || epoch <= 0 {
		t.Errorf("node 1's clean-shutdown marker %q: epoch %d, %v; want its broker epoch", marker, epoch, err)
	}
	adoptLog(t, filepath.Join(src, "adopted-0"), part)
	// Node 2 recovers its logs whole: its checkpoints knew none of this.
	if err := os.Remove(filepath.Join(tc.dirs[1], segment.CleanShutdownFile)); err != nil {
		t.Fatal(err)
	}
	tc.each(tc.start)
	// Node 2, restarted without its marker, registers again once the
	// session of its previous registration has expired (Kafka's
	// DUPLICATE_BROKER_REGISTRATION until then); it leads adopted-0 once
	// unfenced.
	waitWithin(t, 20*time.Second, "node 2 leading adopted-0 again", func() bool {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tc.addrs[0]))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		m, err := kadm.NewClient(cl).Metadata(ctx(t), "adopted")
		if err != nil {
			return false
		}
		p, ok := m.Topics["adopted"].Partitions[0]
		return ok && p.Err == nil && p.Leader == 2
	})

	// The producer's InitProducerId is the cluster's first since the
	// restart: without the floor it would get the first block's first
	// id, 0, and its batch would be answered as a duplicate of the
	// adopted one.
	c := client(t, tc.addrs[0], kgo.DefaultProduceTopic("adopted"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(time.Second))
	batch := make([]*kgo.Record, 4)
	for i := range batch {
		batch[i] = &kgo.Record{Value: fmt.Appendf(nil, "new-%d", i)}
	}
	produceSync(t, c, batch...)
	if id := batch[0].ProducerID; id <= 0 {
		t.Errorf("the producer through node 1 got producer id %d, the adopted producer's (0) or below", id)
	}
	recs := consumeN(t, tc.addrs[0], "adopted", 8)
	for i, r := range recs {
		want := fmt.Sprintf("old-%d", i)
		if i >= 4 {
			want = fmt.Sprintf("new-%d", i-4)
		}
		if string(r.Value) != want || r.Offset != int64(i) {
			t.Errorf("offset %d: %q, want %q at %d", r.Offset, r.Value, want, i)
		}
	}
}

// each runs f for every node at once, as a cluster is started or
// stopped whole.
func (tc *quorumCluster) each(f func(i int)) {
	var wg sync.WaitGroup
	for i := range tc.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// adoptLog replaces the log in partition directory dst with the one in
// src (segments, indexes, producer snapshots, leader epochs), keeping
// dst's partition.metadata: the topic id of dst's cluster.
func adoptLog(t *testing.T, src, dst string) {
	t.Helper()
	old, err := os.ReadDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range old {
		if e.Name() != "partition.metadata" {
			if err := os.Remove(filepath.Join(dst, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range files {
		if e.Name() == "partition.metadata" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
