package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// quorumCluster is three combined-mode nodes (broker and controller) in
// this process, each on 127.0.0.1 with its own ports and directory.
type quorumCluster struct {
	t     *testing.T
	dirs  []string
	props []map[string]string
	nodes []*cluster.Broker // nil while down
	addrs []string
}

func freeLoopbackPort(t *testing.T) int {
	return testPort(t, "127.0.0.1")
}

func startQuorumCluster(t *testing.T, n int, extra map[string]string) *quorumCluster {
	return startQuorumClusterWith(t, n, extra, nil)
}

// startQuorumClusterWith is startQuorumCluster with perNode setting node
// i's own properties (its broker.rack, say) last.
func startQuorumClusterWith(t *testing.T, n int, extra map[string]string, perNode func(i int, props map[string]string)) *quorumCluster {
	tc := &quorumCluster{t: t}
	var voters []string
	ports, cports := make([]int, n), make([]int, n)
	for i := range n {
		ports[i], cports[i] = freeLoopbackPort(t), freeLoopbackPort(t)
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, cports[i]))
	}
	for i := range n {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("node-%d", i+1))
		props := map[string]string{
			"node.id":                               fmt.Sprint(i + 1),
			"process.roles":                         "broker,controller",
			"controller.quorum.voters":              strings.Join(voters, ","),
			"controller.listener.names":             "CONTROLLER",
			"listeners":                             fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", ports[i], cports[i]),
			"inter.broker.listener.name":            "PLAINTEXT",
			"listener.security.protocol.map":        "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"cluster.id":                            "dGVzdC1jbHVzdGVyLWlkMDAw",
			"log.dirs":                              dir,
			"varve.metrics.listener":                "",
			"num.network.threads":                   "2",
			"num.io.threads":                        "4",
			"broker.heartbeat.interval.ms":          "200",
			"broker.session.timeout.ms":             "1500",
			"replica.lag.time.max.ms":               "2000",
			"controller.quorum.election.timeout.ms": "500",
			"offsets.topic.replication.factor":      "3",
			"min.insync.replicas":                   "2",
			"default.replication.factor":            "3",
		}
		for k, v := range extra {
			props[k] = v
		}
		if perNode != nil {
			perNode(i, props)
		}
		tc.dirs = append(tc.dirs, dir)
		tc.props = append(tc.props, props)
		tc.addrs = append(tc.addrs, fmt.Sprintf("127.0.0.1:%d", ports[i]))
		tc.nodes = append(tc.nodes, nil)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); tc.start(i) }()
	}
	wg.Wait()
	t.Cleanup(func() {
		// All at once: the last node's controlled shutdown would wait for
		// a quorum that is gone.
		var wg sync.WaitGroup
		for i := range tc.nodes {
			wg.Add(1)
			go func() { defer wg.Done(); tc.stop(i) }()
		}
		wg.Wait()
	})
	return tc
}

func (tc *quorumCluster) start(i int) {
	cfg, err := config.Parse(tc.props[i])
	if err != nil {
		tc.t.Error(err)
		return
	}
	logger := slog.New(slog.DiscardHandler)
	if os.Getenv("VARVE_TEST_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", i+1)
	}
	b, err := cluster.New(cfg, logger)
	if err != nil {
		tc.t.Error(err)
		return
	}
	if err := b.Start(); err != nil {
		tc.t.Error(err)
		return
	}
	tc.nodes[i] = b
}

func (tc *quorumCluster) stop(i int) {
	if tc.nodes[i] == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tc.nodes[i].Shutdown(ctx); err != nil {
		tc.t.Errorf("node %d shutdown: %v", i+1, err)
	}
	tc.nodes[i] = nil
}

func (tc *quorumCluster) kill(i int) {
	tc.nodes[i].Kill()
	tc.nodes[i] = nil
}

func (tc *quorumCluster) bootstrap() []string {
	var out []string
	for i, b := range tc.nodes {
		if b != nil {
			out = append(out, tc.addrs[i])
		}
	}
	return out
}

// waitFor polls cond until it holds or d passes.
func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A topic with replication factor 3 on three nodes keeps every
// acknowledged record through the loss of its leader's node: the
// producer (acks=all, idempotent) carries on against the new leader, the
// killed node comes back, catches up and rejoins the ISR, and all three
// nodes end with the same metadata.
func TestThreeNodesLeaderLoss(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	adm := kadm.NewClient(client(t, tc.addrs[0]))
	tc.waitBrokers(3)
	resp, err := adm.CreateTopic(ctx(t), 1, 3, nil, "rf3")
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	opts := []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("rf3"),
		kgo.RecordRetries(1000), kgo.RetryTimeout(60 * time.Second)}
	if os.Getenv("VARVE_TEST_LOG") != "" {
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelInfo, nil)))
	}
	prod := client(t, tc.bootstrap()[0], opts...)
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := prod.ProduceSync(ctx(t), kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		}
	}
	produce(0, 200)

	leader := func() int32 {
		m, err := adm.Metadata(ctx(t), "rf3")
		if err != nil {
			return -1
		}
		return m.Topics["rf3"].Partitions[0].Leader
	}
	waitWithin(t, 10*time.Second, "a leader", func() bool { return leader() > 0 })
	old := leader()
	tc.kill(int(old) - 1)
	adm = kadm.NewClient(client(t, tc.bootstrap()[0]))
	produce(200, 400)
	if l := leader(); l == old || l < 0 {
		t.Fatalf("leader after the kill: %d (was %d)", l, old)
	}
	// Kafka's metrics say so: one active controller among the live
	// nodes, and the new leader's partition under-replicated.
	waitWithin(t, 10*time.Second, "one active controller and an under-replicated partition in the metrics", func() bool {
		active, under := 0.0, 0.0
		for _, b := range tc.nodes {
			if b != nil {
				active += b.Gauge("varve_controller_active_controller_count")
				under += b.Gauge("varve_replica_under_replicated_partitions")
			}
		}
		return active == 1 && under == 1
	})

	tc.start(int(old) - 1)
	waitWithin(t, 30*time.Second, "the restarted node back in the ISR", func() bool {
		m, err := adm.Metadata(ctx(t), "rf3")
		return err == nil && len(m.Topics["rf3"].Partitions[0].ISR) == 3
	})
	produce(400, 500)

	got := consumeN(t, tc.bootstrap()[0], "rf3", 500)
	seen := map[string]int{}
	for _, r := range got {
		seen[string(r.Value)]++
	}
	for i := range 500 {
		if seen[fmt.Sprint(i)] != 1 {
			t.Errorf("record %d seen %d times", i, seen[fmt.Sprint(i)])
		}
	}
	// Every node's image ends the same.
	waitWithin(t, 10*time.Second, "identical metadata on every node", func() bool {
		var dumps []string
		for _, b := range tc.nodes {
			dumps = append(dumps, b.MetadataDump())
		}
		return !slices.ContainsFunc(dumps, func(d string) bool { return d != dumps[0] })
	})
}

// The active controller's node dies: another node becomes the active
// controller, admin requests sent to any surviving node go through, the
// dead node's leaderships move once its session expires, and the node
// catches up with everything (a topic created while it was away too)
// when it returns.
func TestThreeNodesControllerLoss(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	adm := kadm.NewClient(client(t, tc.addrs[0]))
	tc.waitBrokers(3)
	if resp, err := adm.CreateTopic(ctx(t), 3, 3, nil, "before"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	active := -1
	waitWithin(t, 10*time.Second, "an active controller", func() bool {
		for i, b := range tc.nodes {
			if b.IsActiveController() {
				active = i
			}
		}
		return active >= 0
	})
	tc.kill(active)
	live := tc.bootstrap()
	adm = kadm.NewClient(client(t, live[len(live)-1]))
	start := time.Now()
	// The new controller answers, and fences the dead node once its
	// session times out: until then the controller would place replicas
	// on it, as Kafka's does.
	if _, err := adm.DescribeTopicConfigs(ctx(t), "before"); err != nil {
		t.Fatal(err)
	}
	tc.waitBrokers(2)
	t.Logf("the dead node fenced %v after its death", time.Since(start).Round(time.Millisecond))
	// Replication factor 2: two brokers are all there is to place
	// replicas on (Kafka refuses 3 then too).
	resp, err := adm.CreateTopic(ctx(t), 3, 2, nil, "after")
	if err != nil || resp.Err != nil {
		t.Fatalf("create after the controller's loss: %v %v", err, resp.Err)
	}
	prod := client(t, live[0], kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(1000), kgo.RetryTimeout(60*time.Second))
	for i := range 100 {
		for _, topic := range []string{"before", "after"} {
			r := &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))}
			if err := prod.ProduceSync(ctx(t), r).FirstErr(); err != nil {
				t.Fatalf("%s record %d: %v", topic, i, err)
			}
		}
	}
	tc.start(active)
	waitWithin(t, 30*time.Second, "identical metadata on every node, every ISR full", func() bool {
		var dumps []string
		for _, b := range tc.nodes {
			dumps = append(dumps, b.MetadataDump())
		}
		if slices.ContainsFunc(dumps, func(d string) bool { return d != dumps[0] }) {
			return false
		}
		m, err := adm.Metadata(ctx(t), "before", "after")
		if err != nil {
			return false
		}
		for _, topic := range m.Topics {
			for _, p := range topic.Partitions {
				if len(p.ISR) != len(p.Replicas) {
					return false
				}
			}
		}
		return true
	})
	for _, topic := range []string{"before", "after"} {
		if got := consumeN(t, tc.bootstrap()[0], topic, 100); len(got) != 100 {
			t.Errorf("%s: %d records, want 100", topic, len(got))
		}
	}
}

// waitBrokers waits until Metadata lists n brokers.
func (tc *quorumCluster) waitBrokers(n int) {
	t := tc.t
	t.Helper()
	var last string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		// A fresh client each time: kgo answers metadata requests from
		// its cache while the cache is young.
		cl, err := kgo.NewClient(kgo.SeedBrokers(tc.bootstrap()[0]))
		if err != nil {
			t.Fatal(err)
		}
		m, err := kadm.NewClient(cl).BrokerMetadata(ctx(t))
		cl.Close()
		if err == nil && len(m.Brokers) == n {
			return
		}
		last = fmt.Sprintf("%v %v", m.Brokers, err)
		time.Sleep(50 * time.Millisecond)
	}
	for i, b := range tc.nodes {
		if b != nil {
			t.Logf("node %d's metadata:\n%s", i+1, b.MetadataDump())
		}
	}
	t.Fatalf("Metadata never listed %d brokers; last answer: %s", n, last)
}

// Kafka: SIGTERM is a controlled shutdown. The node's leaderships move to
// other in-sync replicas before it exits, and a produce the old leader
// holds (acks=all, waiting for followers) is answered
// NOT_LEADER_OR_FOLLOWER the moment it stops leading, so a producer
// moves to the new leader at once instead of waiting for the process
// to exit.
func TestThreeNodesControlledShutdownKeepsProducing(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	tc.waitBrokers(3)
	adm := kadm.NewClient(client(t, tc.addrs[0]))
	if resp, err := adm.CreateTopic(ctx(t), 1, 3, nil, "cs"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	var leader int32 = -1
	waitWithin(t, 10*time.Second, "a leader", func() bool {
		m, err := adm.Metadata(ctx(t), "cs")
		if err == nil {
			leader = m.Topics["cs"].Partitions[0].Leader
		}
		return leader > 0
	})
	other := tc.addrs[int(leader)%3]
	popts := []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("cs"), kgo.RecordRetries(1000)}
	if os.Getenv("VARVE_TEST_LOG") != "" {
		popts = append(popts, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil)))
	}
	prod := client(t, other, popts...)
	// Warm up: the followers' first fetches may have found the topic not
	// yet created on the leader and be waiting replica.fetch.backoff.ms.
	if err := prod.ProduceSync(ctx(t), kgo.StringRecord("first")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	gaps := make(chan time.Duration, 1)
	n := 0
	go func() {
		last, worst := time.Now(), time.Duration(0)
		for {
			select {
			case <-stop:
				gaps <- worst
				return
			default:
			}
			if err := prod.ProduceSync(ctx(t), kgo.StringRecord(fmt.Sprint(n))).FirstErr(); err != nil {
				t.Errorf("record %d: %v", n, err)
			}
			n++
			worst, last = max(worst, time.Since(last)), time.Now()
		}
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	tc.stop(int(leader) - 1)
	t.Logf("controlled shutdown of the leader's node took %v", time.Since(start).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond)
	close(stop)
	worst := <-gaps
	t.Logf("%d records; the longest wait for an acknowledgement was %v", n, worst.Round(time.Millisecond))
	if worst > 2*time.Second {
		t.Errorf("producers stalled %v across a controlled shutdown", worst)
	}
}

// Kafka: a rolling restart (each node in turn: SIGTERM, start again,
// wait for full ISRs) under acks=all load loses nothing, and producers
// stall no longer than a leadership move per node.
func TestThreeNodesRollingRestart(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	tc.waitBrokers(3)
	adm := kadm.NewClient(client(t, tc.addrs[0]))
	if resp, err := adm.CreateTopic(ctx(t), 3, 3, nil, "roll"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	fullISR := func() bool {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tc.bootstrap()...))
		if err != nil {
			return false
		}
		defer cl.Close()
		m, err := kadm.NewClient(cl).Metadata(ctx(t), "roll")
		if err != nil || len(m.Topics["roll"].Partitions) != 3 {
			return false
		}
		for _, p := range m.Topics["roll"].Partitions {
			if len(p.ISR) != 3 || p.Leader < 0 {
				return false
			}
		}
		return true
	}
	waitWithin(t, 20*time.Second, "full ISRs", fullISR)
	prod := client(t, tc.addrs[0], kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("roll"), kgo.RecordRetries(1000))
	if err := prod.ProduceSync(ctx(t), kgo.StringRecord("warm-up")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var worst time.Duration
	acked := map[string]bool{"warm-up": true}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		last := time.Now()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprint(i)
			if err := prod.ProduceSync(ctx(t), kgo.StringRecord(v)).FirstErr(); err != nil {
				t.Errorf("record %s: %v", v, err)
				return
			}
			mu.Lock()
			acked[v] = true
			worst, last = max(worst, time.Since(last)), time.Now()
			mu.Unlock()
		}
	}()
	for i := range tc.nodes {
		mu.Lock()
		worst = 0
		mu.Unlock()
		tc.stop(i)
		tc.start(i)
		waitWithin(t, 30*time.Second, fmt.Sprintf("full ISRs after node %d's restart", i+1), fullISR)
		mu.Lock()
		t.Logf("node %d restarted: the longest wait for an acknowledgement was %v", i+1, worst.Round(time.Millisecond))
		if worst > 2*time.Second {
			t.Errorf("producers stalled %v while node %d restarted", worst, i+1)
		}
		mu.Unlock()
	}
	close(stop)
	<-done
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	got := consumeN(t, tc.bootstrap()[0], "roll", n)
	seen := map[string]int{}
	for _, r := range got {
		seen[string(r.Value)]++
	}
	for v := range acked {
		if seen[v] != 1 {
			t.Errorf("acknowledged %q read %d times", v, seen[v])
		}
	}
}
