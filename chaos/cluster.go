package chaos

import (
	"errors"

	"github.com/varve/varve/internal/localcluster"
)

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
	return &Runner{Nodes: c.Nodes(), Cut: c.Net.Cut, History: h}
}

// Close heals every cut and stops every node (SIGTERM, then SIGKILL
// for one that does not exit).
func (c *Cluster) Close() error {
	return errors.Join(c.Net.HealAll(), c.Local.Stop(), c.Net.Close())
}
