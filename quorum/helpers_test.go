package quorum

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	stdnet "net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/metadata"
)

// testCluster is three nodes on loopback ports in one process, each
// with a broker lifecycle, with timeouts scaled down: a tick of 20 ms,
// elections after 200 ms, sessions of 1 s, heartbeats every 100 ms.
type testCluster struct {
	t     testing.TB
	cfgs  []Config
	nodes []*Node
	lcs   []*Lifecycle
}

const (
	testElectionMs  = 200
	testSessionMs   = 1000
	testHeartbeatMs = 100
)

func newTestCluster(t testing.TB, snapshotBytes int64) *testCluster {
	t.Helper()
	c := &testCluster{t: t}
	var voters []Voter
	for i := range 3 {
		voters = append(voters, Voter{ID: int32(i + 1), Addr: freeAddr(t)})
	}
	for i := range 3 {
		cfg := DefaultConfig()
		cfg.NodeID, cfg.ClusterID, cfg.Voters = int32(i+1), "test-cluster", voters
		cfg.MetadataLogDir = t.TempDir()
		cfg.TickMs, cfg.ElectionTimeoutMs = 20, testElectionMs
		cfg.RequestTimeoutMs = 500
		cfg.SnapshotBytes = snapshotBytes
		cfg.Controller.SessionTimeoutMs = testSessionMs
		cfg.Logger = testLogger()
		c.cfgs = append(c.cfgs, cfg)
	}
	c.nodes, c.lcs = make([]*Node, 3), make([]*Lifecycle, 3)
	for i := range 3 {
		c.start(i)
	}
	t.Cleanup(c.close)
	return c
}

func testLogger() *slog.Logger {
	if os.Getenv("VARVE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t testing.TB) string {
	ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start opens node i from its directory and starts it and its broker's
// lifecycle.
func (c *testCluster) start(i int) {
	c.t.Helper()
	n, err := New(c.cfgs[i])
	if err != nil {
		c.t.Fatalf("node %d: %v", i+1, err)
	}
	if err := n.Start(); err != nil {
		c.t.Fatalf("node %d: %v", i+1, err)
	}
	c.nodes[i] = n
	lc := NewLifecycle(n.Client(), LifecycleConfig{BrokerID: n.cfg.NodeID, ClusterID: n.cfg.ClusterID,
		Endpoints: []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: int32(9090 + i), SecurityProtocol: "PLAINTEXT"}},
		Rack:      "", HeartbeatIntervalMs: testHeartbeatMs, MetadataOffset: n.MetadataOffset, Logger: testLogger()})
	lc.Start()
	c.lcs[i] = lc
}

// kill stops node i as a crash would, with its broker.
func (c *testCluster) kill(i int) {
	c.lcs[i].Stop()
	c.nodes[i].Kill()
	c.nodes[i], c.lcs[i] = nil, nil
}

func (c *testCluster) close() {
	for i, n := range c.nodes {
		if n != nil {
			c.lcs[i].Stop()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			n.Stop(ctx)
			cancel()
		}
	}
}

// active waits for the node running the active controller.
func (c *testCluster) active(within time.Duration) int {
	c.t.Helper()
	var found int
	c.waitFor(within, "an active controller", func() bool {
		for i, n := range c.nodes {
			if n != nil && n.IsActive() {
				found = i
				return true
			}
		}
		return false
	})
	return found
}

func (c *testCluster) waitUnfenced(within time.Duration) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for i, lc := range c.lcs {
		if lc == nil {
			continue
		}
		if err := lc.WaitUnfenced(ctx); err != nil {
			c.t.Fatalf("broker %d never unfenced: %v", i+1, err)
		}
	}
}

func (c *testCluster) waitFor(within time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s within %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitSameImages waits until every running node publishes the same
// image, and returns its description.
func (c *testCluster) waitSameImages(within time.Duration) string {
	c.t.Helper()
	var last []string
	var desc string
	deadline := time.Now().Add(within)
	for {
		last = last[:0]
		for _, n := range c.nodes {
			if n != nil {
				last = append(last, describe(n.Publisher().Image()))
			}
		}
		if !slices.ContainsFunc(last, func(s string) bool { return s != last[0] }) {
			desc = last[0]
			return desc
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("images differ after %v:\n%s", within, strings.Join(last, "\n---\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// describe prints everything in an image but its version (which counts
// records replayed, and so differs for a node restored from a
// snapshot).
func describe(img *metadata.Image) string {
	var b strings.Builder
	for _, br := range img.Brokers() {
		fmt.Fprintf(&b, "broker %d epoch=%d inc=%x fenced=%v shutdown=%v endpoints=%v\n",
			br.ID, br.Epoch, br.IncarnationID[:4], br.Fenced, br.InControlledShutdown, br.Endpoints)
	}
	for t := range img.Topics() {
		fmt.Fprintf(&b, "topic %s id=%x", t.Name, t.ID[:4])
		for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
			fmt.Fprintf(&b, " %s=%s", k, t.Configs[k])
		}
		b.WriteString("\n")
		for i, p := range t.Partitions {
			fmt.Fprintf(&b, "  %d leader=%d epoch=%d pepoch=%d replicas=%v isr=%v\n",
				i, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.ISR)
		}
	}
	fmt.Fprintf(&b, "pids=%+v\n", img.ProducerIDs())
	return b.String()
}

// createTopic creates a topic through client.
func createTopic(t *testing.T, client *Client, name string, partitions int32, rf int16) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := client.Do(ctx, req)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

func leaders(img *metadata.Image, broker int32) (led, inISR int) {
	for t := range img.Topics() {
		for _, p := range t.Partitions {
			if p.Leader == broker {
				led++
			}
			if slices.Contains(p.ISR, broker) {
				inISR++
			}
		}
	}
	return led, inISR
}

type netDialer struct{}

func (netDialer) dial(addr string) (stdnet.Conn, error) {
	return stdnet.DialTimeout("tcp", addr, time.Second)
}
