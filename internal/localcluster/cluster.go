package localcluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Options describe a local cluster. The zero value of each field has a
// meaning, given beside it.
type Options struct {
	Nodes int    // how many nodes; 0: 3
	Dir   string // node i lives in Dir/node-<i>; required
	// Controllers, when above 0, runs dedicated controllers: nodes 1 to
	// Controllers are controller-only (process.roles=controller, the
	// voters) and Nodes more after them are broker-only
	// (process.roles=broker, raft learners), as Kafka's clusters with
	// dedicated controllers run. 0: Nodes nodes in combined mode.
	Controllers int

	// BasePort is node 1's broker port; its controller listener is on
	// BasePort+1. With a host per node every node uses the same two
	// ports on its own address; with SharedHost node i's ports start at
	// BasePort+2(i-1). 0: free ports, chosen by New.
	BasePort int
	// SharedHost puts every node on 127.0.0.1 (distinct ports) instead
	// of node i on 127.0.0.i. Link faults cut traffic by address, so
	// they need a host per node.
	SharedHost bool
	// MetricsPort is node 1's varve.metrics.listener port (node i's is
	// MetricsPort+i-1 with SharedHost). 0: no metrics listener.
	MetricsPort int

	// ClusterID is the cluster.id every node is formatted with. "": the
	// one node 1's log directory was formatted with, else a new one.
	ClusterID string
	// Props are extra properties for every node, written after (and
	// winning over) the generated ones.
	Props map[string]string

	Binary   string // the varve executable the nodes run; required by Start
	LogLevel string // `varve server --log-level`; "": info
}

// A Cluster is N nodes laid out on one machine. Its methods are called
// from one goroutine at a time; it starts and stops nodes in parallel
// itself.
type Cluster struct {
	ClusterID string
	opts      Options
	nodes     []*Node
}

// New lays the cluster out: each node's id, host, ports and files, and
// the cluster id. It writes nothing (Write does) and starts nothing.
func New(o Options) (*Cluster, error) {
	if o.Nodes == 0 {
		o.Nodes = 3
	}
	if o.Nodes < 1 || o.Controllers < 0 || o.Nodes+o.Controllers > 254 {
		return nil, fmt.Errorf("localcluster: %d nodes and %d controllers: expected 1 to 254 in all (one 127.0.0.x each)", o.Nodes, o.Controllers)
	}
	if o.Dir == "" {
		return nil, errors.New("localcluster: Options.Dir is required")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	o.Dir = dir
	c := &Cluster{opts: o}
	for id := 1; id <= o.Nodes+o.Controllers; id++ {
		c.nodes = append(c.nodes, c.layout(id))
	}
	if o.BasePort == 0 {
		if err := c.pickFreePorts(); err != nil {
			return nil, err
		}
	}
	if c.ClusterID, err = c.clusterID(); err != nil {
		return nil, err
	}
	return c, nil
}

// layout places node id on its host and ports (BasePort 0 leaves the
// ports to pickFreePorts).
func (c *Cluster) layout(id int) *Node {
	o := c.opts
	n := &Node{ID: id, Host: "127.0.0." + strconv.Itoa(id), Dir: filepath.Join(o.Dir, "node-"+strconv.Itoa(id)), Roles: RolesCombined}
	switch {
	case o.Controllers > 0 && id <= o.Controllers:
		n.Roles = RolesController
	case o.Controllers > 0:
		n.Roles = RolesBroker
	}
	step := 0
	if o.SharedHost {
		n.Host, step = "127.0.0.1", id-1
	}
	if o.BasePort != 0 {
		n.Port, n.ControllerPort = o.BasePort+2*step, o.BasePort+2*step+1
	}
	if o.MetricsPort != 0 {
		n.MetricsPort = o.MetricsPort + step
	}
	n.proc = Process{Name: n.Name(), Bin: o.Binary, Addr: n.serveAddr(),
		Args: []string{"server", n.PropertiesFile(), "--log-level", cmp(o.LogLevel, "info")}}
	return n
}

func cmp(s, deflt string) string {
	if s == "" {
		return deflt
	}
	return s
}

// Free ports are taken below the kernel's ephemeral range (Linux's
// net.ipv4.ip_local_port_range starts at 32768), from a random start:
// a port the kernel hands out for ":0" is one it may hand again to any
// outgoing connection or other process before the node binds it.
const freePortLow, freePortHigh = 20000, 32000

// pickFreePorts gives every node free broker and controller ports on
// its host. All listeners stay open until every port is chosen, so no
// two are the same; another process may still take one before the
// node binds it (tests on a busy machine retry with new ports).
func (c *Cluster) pickFreePorts() error {
	var open []net.Listener
	defer func() {
		for _, l := range open {
			l.Close()
		}
	}()
	next := freePortLow + rand.IntN(freePortHigh-freePortLow)
	free := func(host string) (int, error) {
		for range freePortHigh - freePortLow {
			p := next
			if next++; next >= freePortHigh {
				next = freePortLow
			}
			l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
			if err != nil {
				continue
			}
			open = append(open, l)
			return p, nil
		}
		return 0, fmt.Errorf("localcluster: no free port on %s in %d-%d", host, freePortLow, freePortHigh-1)
	}
	for _, n := range c.nodes {
		var err error
		if n.Port, err = free(n.Host); err != nil {
			return err
		}
		if n.ControllerPort, err = free(n.Host); err != nil {
			return err
		}
		n.proc.Addr = n.serveAddr()
	}
	return nil
}

// Nodes are the cluster's nodes, node 1 first.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Node is the node with id (1-based), or nil.
func (c *Cluster) Node(id int) *Node {
	if id < 1 || id > len(c.nodes) {
		return nil
	}
	return c.nodes[id-1]
}

// BootstrapServers is every broker's address, comma-separated, as
// Kafka clients take bootstrap.servers.
func (c *Cluster) BootstrapServers() string {
	var addrs []string
	for _, n := range c.nodes {
		if n.IsBroker() {
			addrs = append(addrs, n.Addr())
		}
	}
	return strings.Join(addrs, ",")
}

// Voters is controller.quorum.voters: id@host:port of every
// controller's controller listener.
func (c *Cluster) Voters() string {
	var vs []string
	for _, n := range c.nodes {
		if n.IsController() {
			vs = append(vs, strconv.Itoa(n.ID)+"@"+n.ControllerAddr())
		}
	}
	return strings.Join(vs, ",")
}

// brokers counts the nodes that run a broker.
func (c *Cluster) brokers() int {
	k := 0
	for _, n := range c.nodes {
		if n.IsBroker() {
			k++
		}
	}
	return k
}

// Write writes every node's server.properties and formats its log
// directory (meta.properties), creating the directories.
func (c *Cluster) Write() error {
	for _, n := range c.nodes {
		if err := os.MkdirAll(n.LogDir(), 0o755); err != nil {
			return fmt.Errorf("localcluster: %w", err)
		}
		if err := writeFileSynced(n.PropertiesFile(), c.PropertiesText(n)); err != nil {
			return fmt.Errorf("localcluster: %s: %w", n.Name(), err)
		}
		if err := format(n.LogDir(), c.ClusterID, n.ID); err != nil {
			return fmt.Errorf("localcluster: %s: %w", n.Name(), err)
		}
	}
	return nil
}

// Start starts every node and returns once each accepts connections on
// its broker listener. All are launched before any is waited for: a
// node of a quorum may not serve until a majority runs. On an error the
// nodes already started are killed.
func (c *Cluster) Start() error {
	if c.opts.Binary == "" {
		return errors.New("localcluster: Options.Binary is required to start nodes")
	}
	var errs []error
	for _, n := range c.nodes {
		errs = append(errs, n.launch())
	}
	for i, n := range c.nodes {
		if errs[i] == nil {
			errs[i] = n.proc.waitServing(StartTimeout)
		}
	}
	if err := errors.Join(errs...); err != nil {
		c.Kill()
		return err
	}
	return nil
}

// Up lays out, writes and starts a cluster.
func Up(o Options) (*Cluster, error) {
	c, err := New(o)
	if err != nil {
		return nil, err
	}
	if err := c.Write(); err != nil {
		return nil, err
	}
	return c, c.Start()
}

// Stop shuts every running node down with SIGTERM, in parallel (a
// quorum stopped one node at a time would lose its majority before its
// last nodes finished), and waits for all of them.
func (c *Cluster) Stop() error { return c.each((*Node).Stop) }

// Kill sends SIGKILL to every running node and waits for them to go.
func (c *Cluster) Kill() error {
	return c.each(func(n *Node) error {
		if !n.Running() {
			return nil
		}
		return n.Kill()
	})
}

// each runs fn on every node in parallel and joins the errors.
func (c *Cluster) each(fn func(*Node) error) error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		wg.Go(func() { errs[i] = fn(n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
