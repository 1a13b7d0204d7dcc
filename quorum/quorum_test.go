package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestThreeNodes runs three nodes on loopback ports: a leader is
// elected; three brokers register and are unfenced; a topic with three
// replicas is created through a client that first asks a follower; the
// raft leader is killed and a new active controller answers within a
// few election timeouts; the killed broker is fenced after its session
// times out and leaves every ISR; restarted from its directory, it
// catches up from the leader's snapshot (the log was compacted past it)
// and is unfenced; every node publishes the same image throughout.
// Kafka: KIP-595 (Raft quorum), KIP-631 (registration, heartbeats and
// fencing), KIP-630 (snapshots).
func TestThreeNodes(t *testing.T) {
	c := newTestCluster(t, 1) // a snapshot after every entry
	leader := c.active(5 * time.Second)
	c.waitUnfenced(10 * time.Second)

	// Kafka: KIP-590 — a request at a node that is not the controller is
	// answered NOT_CONTROLLER; the client moves on to the next voter.
	follower := (leader + 1) % 3
	viaFollower := newClient(&c.nodes[follower].cfg, func() int32 { return int32(follower + 1) })
	defer viaFollower.Close()
	createTopic(t, viaFollower, "events", 3, 3)
	img := c.waitSameImages(5 * time.Second)
	t.Logf("after create:\n%s", img)
	if p, ok := c.nodes[follower].Publisher().Image().Partition("events", 2); !ok || len(p.ISR) != 3 {
		t.Fatalf("events-2 is %+v, want three replicas in the ISR", p)
	}

	// The raft leader crashes: a new controller takes over.
	killedID := int32(leader + 1)
	c.kill(leader)
	killedAt := time.Now()
	next := c.active(10 * testElectionMs * time.Millisecond)
	t.Logf("node %d active %v after the kill", next+1, time.Since(killedAt))
	createTopic(t, c.nodes[next].Client(), "after-failover", 2, 2)

	// Kafka: BrokerHeartbeatManager — no heartbeat for
	// broker.session.timeout.ms fences the broker and takes it out of
	// every ISR.
	c.waitFor(4*testSessionMs*time.Millisecond, "fencing of the killed broker", func() bool {
		img := c.nodes[next].Publisher().Image()
		b, ok := img.Broker(killedID)
		led, inISR := leaders(img, killedID)
		return ok && b.Fenced && led == 0 && inISR == 0
	})
	c.waitSameImages(5 * time.Second)

	// Restarted from its directory, it catches up from a snapshot.
	c.start(leader)
	c.waitUnfenced(10 * time.Second)
	c.waitSameImages(5 * time.Second)
	if got := c.nodes[leader].SnapshotsReceived(); got == 0 {
		t.Errorf("node %d caught up without the leader's snapshot", killedID)
	}
	if _, ok := c.nodes[leader].Publisher().Image().Topic("after-failover"); !ok {
		t.Errorf("node %d never learned of the topic created while it was down", killedID)
	}
}

// TestControlledShutdown: a broker that asks to shut down through its
// heartbeats has its leaderships moved and leaves the ISRs before the
// controller lets it go. Kafka: KIP-841, BrokerLifecycleManager's
// controlled shutdown.
func TestControlledShutdown(t *testing.T) {
	c := newTestCluster(t, 20<<20)
	c.active(5 * time.Second)
	c.waitUnfenced(10 * time.Second)
	createTopic(t, c.nodes[0].Client(), "moves", 6, 3)
	c.waitSameImages(5 * time.Second)
	const broker = 2
	if led, _ := leaders(c.nodes[0].Publisher().Image(), broker); led == 0 {
		t.Fatalf("broker %d leads nothing to move", broker)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.lcs[broker-1].ControlledShutdown(ctx); err != nil {
		t.Fatalf("controlled shutdown: %v", err)
	}
	for i, n := range c.nodes {
		img := n.Publisher().Image()
		led, inISR := leaders(img, broker)
		b, _ := img.Broker(broker)
		if i == broker-1 {
			// The broker's own image may trail; the controller waited
			// for every active broker to replay the shutdown's records.
			continue
		}
		if led != 0 || inISR != 0 || !b.InControlledShutdown {
			t.Errorf("node %d's image: broker %d leads %d, in %d ISRs, in controlled shutdown %v",
				i+1, broker, led, inISR, b.InControlledShutdown)
		}
	}
}

// TestRestartAll: the records in the log's entries survive a restart of
// every node (no snapshot has been taken): the same image is rebuilt
// and a new controller continues from it. Kafka: KIP-595, the metadata
// log is the source of truth.
func TestRestartAll(t *testing.T) {
	c := newTestCluster(t, 20<<20)
	c.active(5 * time.Second)
	c.waitUnfenced(10 * time.Second)
	createTopic(t, c.nodes[0].Client(), "kept", 4, 3)
	before := c.waitSameImages(5 * time.Second)
	offsets := make([]int64, 3)
	for i := range 3 {
		offsets[i] = c.nodes[i].MetadataOffset()
		c.kill(i)
	}
	for i := range 3 {
		// The lifecycles must not change the image before it is read.
		n, err := New(c.cfgs[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		c.nodes[i] = n
		c.lcs[i] = NewLifecycle(n.Client(), LifecycleConfig{BrokerID: n.cfg.NodeID, ClusterID: "test-cluster",
			HeartbeatIntervalMs: testHeartbeatMs, MetadataOffset: n.MetadataOffset, Logger: testLogger()})
	}
	c.active(5 * time.Second)
	for i, n := range c.nodes {
		c.waitFor(5*time.Second, "replay of the log", func() bool { return n.MetadataOffset() >= offsets[i] })
		if got := describe(n.Publisher().Image()); got != before {
			t.Errorf("node %d after restart:\n%s\nwant:\n%s", i+1, got, before)
		}
	}
	if snap, _ := c.nodes[0].st.Snapshot(); snap.GetMetadata().GetIndex() != 0 {
		t.Errorf("a snapshot was taken (index %d): the test meant to replay entries", snap.GetMetadata().GetIndex())
	}
	for _, lc := range c.lcs {
		lc.Start()
	}
	c.waitUnfenced(10 * time.Second)
	createTopic(t, c.nodes[1].Client(), "after-restart", 1, 3)
	c.waitSameImages(5 * time.Second)
}

// TestNotController: a node that is not the active controller answers
// Kafka's controller APIs with NOT_CONTROLLER. Kafka: KIP-590.
func TestNotController(t *testing.T) {
	c := newTestCluster(t, 20<<20)
	leader := c.active(5 * time.Second)
	follower := (leader + 1) % 3
	conn, err := (&netDialer{}).dial(c.nodes[follower].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(req.MaxVersion())
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "x", 1, 1
	req.Topics = append(req.Topics, rt)
	resp, err := exchange(conn, 1, req, "test")
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != kerr.NotController.Code {
		t.Fatalf("follower answered error %d, want NOT_CONTROLLER", code)
	}
}
