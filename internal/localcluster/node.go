package localcluster

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// A Node is one `varve server` process of a Cluster, with its files
// under its own directory:
//
//	node-<id>/server.properties   the node's properties (Write)
//	node-<id>/data/               its log directory, formatted (meta.properties)
//	node-<id>/server.log          its stdout and stderr, appended to across restarts
//
// Its methods match chaos.Node, so a fault schedule can act on it. A
// Node is driven from one goroutine at a time.
type Node struct {
	ID             int
	Roles          string // process.roles: RolesCombined, RolesController or RolesBroker
	Host           string // its loopback address; every listener binds it
	Port           int    // the PLAINTEXT (broker) listener's port; unused on a controller-only node
	ControllerPort int    // the CONTROLLER listener's port; a broker-only node's varve.quorum.learner.listener
	MetricsPort    int    // varve.metrics.listener's port; 0: none
	Dir            string

	proc Process
}

// The process.roles a node runs with.
const (
	RolesCombined   = "broker,controller"
	RolesController = "controller"
	RolesBroker     = "broker"
)

// IsBroker reports whether the node serves clients.
func (n *Node) IsBroker() bool { return n.Roles != RolesController }

// IsController reports whether the node is a voter of the quorum.
func (n *Node) IsController() bool { return n.Roles != RolesBroker }

// serveAddr is the address Start waits on: the broker listener, or a
// controller-only node's controller listener.
func (n *Node) serveAddr() string {
	if !n.IsBroker() {
		return n.ControllerAddr()
	}
	return n.Addr()
}

// Name is "node<id>".
func (n *Node) Name() string { return "node" + strconv.Itoa(n.ID) }

// Addr is the broker listener's host:port, where clients bootstrap.
func (n *Node) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// ControllerAddr is the controller listener's host:port.
func (n *Node) ControllerAddr() string {
	return net.JoinHostPort(n.Host, strconv.Itoa(n.ControllerPort))
}

// PropertiesFile is the node's server.properties.
func (n *Node) PropertiesFile() string { return filepath.Join(n.Dir, "server.properties") }

// LogDir is the node's log.dirs (one directory).
func (n *Node) LogDir() string { return filepath.Join(n.Dir, "data") }

// LogFile is where the node's output goes.
func (n *Node) LogFile() string { return filepath.Join(n.Dir, "server.log") }

// Log reads the node's output so far.
func (n *Node) Log() ([]byte, error) { return os.ReadFile(n.LogFile()) }

// Pid is the running node's process id, or 0.
func (n *Node) Pid() int { return n.proc.Pid() }

// Running reports whether the node's process runs (it may be paused).
func (n *Node) Running() bool { return n.proc.Running() }

// Exited is closed when the node's process exits (nil before Start).
func (n *Node) Exited() <-chan struct{} { return n.proc.Exited() }

// launch starts the process with its output appended to LogFile,
// without waiting for it to serve.
func (n *Node) launch() error {
	f, err := os.OpenFile(n.LogFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name(), err)
	}
	// The child holds its own copy of the descriptor once started.
	defer f.Close()
	fmt.Fprintf(f, "=== %s: start %s at %s\n", n.Name(), n.PropertiesFile(), time.Now().Format(time.RFC3339Nano))
	n.proc.Out = f
	return n.proc.launch()
}

// Start starts the node and returns once it accepts connections on its
// broker listener (a controller-only node: its controller listener).
func (n *Node) Start() error {
	if err := n.launch(); err != nil {
		return err
	}
	return n.proc.waitServing(StartTimeout)
}

// Stop shuts the node down with SIGTERM (a controlled shutdown) and
// waits for it to exit; see Process.Stop.
func (n *Node) Stop() error { return n.proc.Stop() }

// Kill sends SIGKILL and waits for the process to go.
func (n *Node) Kill() error { return n.proc.Kill() }

// Pause sends SIGSTOP.
func (n *Node) Pause() error { return n.proc.Pause() }

// Resume sends SIGCONT.
func (n *Node) Resume() error { return n.proc.Resume() }

// Restart stops the node cleanly and starts it again.
func (n *Node) Restart() error {
	if err := n.Stop(); err != nil {
		return err
	}
	return n.Start()
}
