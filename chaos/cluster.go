package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/internal/localcluster"
)

// ShortTimeouts are Kafka's failure-detection timeouts scaled down for
// fault tests, so that a dead or cut node is noticed in seconds and a
// run of many faults takes minutes: a broker is fenced 3 s after its
// last heartbeat (broker.session.timeout.ms, 9000 by default; heartbeat
// 500 ms, 2000 by default), a follower leaves the ISR 5 s after it was
// last caught up (replica.lag.time.max.ms, 30000), a controller
// election starts 1 s after the quorum leader went quiet (1000, as
// Kafka's default). Topics default to replication factor 3 and
// min.insync.replicas 2, and a group's first rebalance does not wait.
func ShortTimeouts() map[string]string {
	return map[string]string{
		"broker.session.timeout.ms":             "3000",
		"broker.heartbeat.interval.ms":          "500",
		"replica.lag.time.max.ms":               "5000",
		"controller.quorum.election.timeout.ms": "1000",
		"default.replication.factor":            "3",
		"min.insync.replicas":                   "2",
		"group.initial.rebalance.delay.ms":      "0",
		"num.network.threads":                   "2",
		"num.io.threads":                        "4",
	}
}

// Cluster is a local cluster under faults: `varve server` processes laid
// out and run by package localcluster, node i (from 0 here, from 1 in
// localcluster) on 127.0.0.(i+1), and the Net that cuts the links
// between them. It must run in a private network namespace
// (EnterNetns), where those addresses are the test's own.
type Cluster struct {
	Local *localcluster.Cluster
	Net   *Net
}

// StartCluster starts a cluster of o.Nodes nodes, each on its own
// loopback address (o.SharedHost is refused: cuts need an address per
// node), and its Net with no cuts.
func StartCluster(o localcluster.Options) (*Cluster, error) {
	if o.SharedHost {
		return nil, errors.New("chaos: a cluster under link faults needs an address per node, not SharedHost")
	}
	lc, err := localcluster.New(o)
	if err != nil {
		return nil, err
	}
	var hosts []string
	for _, n := range lc.Nodes() {
		hosts = append(hosts, n.Host)
	}
	net, err := NewNet(hosts...)
	if err != nil {
		return nil, err
	}
	if err := lc.Write(); err != nil {
		return nil, err
	}
	if err := lc.Start(); err != nil {
		return nil, errors.Join(err, net.Close())
	}
	return &Cluster{Local: lc, Net: net}, nil
}

// Brokers are the nodes' broker addresses, node 1's first.
func (c *Cluster) Brokers() []string {
	var bs []string
	for _, n := range c.Local.Nodes() {
		bs = append(bs, n.Addr())
	}
	return bs
}

// ClientHost is the address the test's clients connect from: the one
// after the last node's, so that no cut between nodes cuts a client.
func (c *Cluster) ClientHost() string {
	return "127.0.0." + strconv.Itoa(len(c.Local.Nodes())+1)
}

// ClientOpts bind a client to ClientHost (see BindClient).
func (c *Cluster) ClientOpts() []kgo.Opt { return []kgo.Opt{BindClient(c.ClientHost())} }

// Roles asks the cluster's nodes where its roles are, from ClientHost.
func (c *Cluster) Roles() (*Roles, error) { return NewRoles(c.Brokers(), c.ClientOpts()...) }

// Nodes are the cluster's nodes as a Runner acts on them.
func (c *Cluster) Nodes() []Node {
	var ns []Node
	for _, n := range c.Local.Nodes() {
		ns = append(ns, n)
	}
	return ns
}

// Runner applies schedules to the cluster's nodes and links, noting
// them in h.
func (c *Cluster) Runner(h *History) *Runner {
	return &Runner{Nodes: c.Nodes(), Cut: c.Net.Cut, Isolate: c.Net.Isolate, History: h}
}

// FaultRunner is Runner with faults on roles found by roles (the leader
// of a partition of topic, the active controller), compound faults on
// topic's partitions (Cluster.Compound), and, before each
// fault, a wait of up to settle for every node to show every one of
// topic's partitions with its replicas all in sync: one fault at a
// time then means one node short at a time.
func (c *Cluster) FaultRunner(h *History, roles *Roles, topic string, partitions int, settle time.Duration) *Runner {
	r := c.Runner(h)
	r.Locate = func(ctx context.Context, f Fault) (int, error) { return locate(ctx, roles, topic, f) }
	r.Compound = c.Compound(h, roles, topic, partitions)
	r.Settle = func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, settle)
		defer cancel()
		if err := c.AwaitRegistered(ctx); err != nil {
			return err
		}
		return roles.FullISR(ctx, topic, partitions)
	}
	return r
}

// AwaitRegistered waits until every running node's log shows, since its
// last start, that it registered and was unfenced. Metadata alone does
// not say so: a node killed and started again within its session
// timeout is refused registration until the old session expires, and
// until then the metadata still shows the old process's registration,
// in every ISR, so that a full ISR would let the next fault strike
// while the node is in fact out (three nodes down at once).
func (c *Cluster) AwaitRegistered(ctx context.Context) error {
	for {
		var waiting []string
		for _, n := range c.Local.Nodes() {
			if !n.Running() {
				continue
			}
			b, err := n.Log()
			if err != nil {
				return err
			}
			since := b[max(bytes.LastIndex(b, []byte("=== "+n.Name()+": start")), 0):]
			if !bytes.Contains(since, []byte(`msg="broker unfenced"`)) {
				waiting = append(waiting, n.Name())
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: %v not registered and unfenced since their start: %w", waiting, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// locate finds f's node, retrying for a few seconds (a cluster that has
// just healed may still be electing).
func locate(ctx context.Context, roles *Roles, topic string, f Fault) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		var id int32
		var err error
		switch f.Target {
		case PartitionLeader:
			id, err = roles.Leader(ctx, topic, f.Partition)
		case ActiveController:
			id, err = roles.ActiveController(ctx)
		default:
			return 0, fmt.Errorf("chaos: no role for target %v", f.Target)
		}
		if err == nil {
			return roles.NodeIndex(id)
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Close heals every cut and stops every node (SIGTERM, then SIGKILL
// for one that does not exit).
func (c *Cluster) Close() error {
	return errors.Join(c.Net.HealAll(), c.Local.Stop(), c.Net.Close())
}
