package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/varve/varve/internal/localcluster"
)

// varve cluster up: a local cluster of N `varve server` processes for
// development and experiments (package localcluster lays it out).
// `varve cluster status` (cluster_status.go) shows a running one.

// clusterCmd groups the commands that work on a whole cluster.
var clusterCmd = &cobra.Command{
	Use:   "cluster",
	Short: "Run a local cluster of Varve nodes, or show a cluster's state",
}

func init() {
	clusterCmd.AddCommand(newClusterUpCmd(), newClusterStatusCmd())
	rootCmd.AddCommand(clusterCmd)
}

// clusterUpOptions are the flags of varve cluster up.
type clusterUpOptions struct {
	nodes, controllers, basePort, metricsPort int
	dir, logLevel                             string
	sharedHost                                bool
	overrides                                 []string
}

func newClusterUpCmd() *cobra.Command {
	var o clusterUpOptions
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local cluster and stop it on Ctrl-C",
		Long: `Start N nodes on this machine, each a varve server process in combined
mode (process.roles=broker,controller), node i on 127.0.0.i: it writes
DIR/node-<i>/server.properties with Kafka's property names, formats each
node's log directory (meta.properties), starts the nodes, prints the
bootstrap servers and each node's process id, addresses and log file, and
stops them all (SIGTERM) on Ctrl-C. Run again over the same DIR, the
cluster comes back with its data. The property files are what an
operator would give varve server on N machines.

With --controllers C, nodes 1 to C are dedicated controllers
(process.roles=controller: the quorum's voters, serving no client) and
the N nodes after them are brokers (process.roles=broker), which follow
the metadata log as raft learners, as Kafka's larger clusters run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			bin, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find the varve binary: %w", err)
			}
			return runClusterUp(ctx, cmd.OutOrStdout(), bin, o)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.nodes, "nodes", 3, "how many nodes (with --controllers: how many brokers)")
	fl.IntVar(&o.controllers, "controllers", 0, "how many dedicated controllers to run besides the brokers (0: every node is both)")
	fl.StringVar(&o.dir, "dir", "./varve-cluster", "directory for every node's properties, data and log")
	fl.IntVar(&o.basePort, "base-port", 9092, "broker port (the controller's is the next one; 0: free ports)")
	fl.BoolVar(&o.sharedHost, "shared-host", false, "every node on 127.0.0.1 on distinct ports, not node i on 127.0.0.i")
	fl.IntVar(&o.metricsPort, "metrics-port", 0, "node 1's metrics port (0: no metrics listeners)")
	fl.StringArrayVar(&o.overrides, "override", nil, "a property for every node as key=value (repeatable)")
	fl.StringVar(&o.logLevel, "log-level", "info", "the nodes' log level: debug, info, warn or error")
	return cmd
}

// runClusterUp starts the cluster, prints it, and stops it when ctx
// ends.
func runClusterUp(ctx context.Context, out io.Writer, bin string, o clusterUpOptions) error {
	props := map[string]string{}
	for _, kv := range o.overrides {
		k, v, ok := cutProperty(kv)
		if !ok {
			return fmt.Errorf("--override %q: want key=value", kv)
		}
		props[k] = v
	}
	c, err := localcluster.Up(localcluster.Options{Nodes: o.nodes, Controllers: o.controllers, Dir: o.dir, BasePort: o.basePort,
		SharedHost: o.sharedHost, MetricsPort: o.metricsPort, Props: props, Binary: bin, LogLevel: o.logLevel})
	if err != nil {
		return err
	}
	printCluster(out, c)
	fmt.Fprintln(out, "Ctrl-C stops every node.")
	watchNodes(ctx, out, c)
	fmt.Fprintln(out, "stopping...")
	if err := c.Stop(); err != nil {
		return err
	}
	fmt.Fprintln(out, "stopped")
	return nil
}

func printCluster(out io.Writer, c *localcluster.Cluster) {
	fmt.Fprintf(out, "cluster.id %s, %d nodes\n", c.ClusterID, len(c.Nodes()))
	fmt.Fprintf(out, "bootstrap servers: %s\n\n", c.BootstrapServers())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLES\tPID\tBROKER\tCONTROLLER\tPROPERTIES\tLOG")
	for _, n := range c.Nodes() {
		broker, ctrl := n.Addr(), n.ControllerAddr()
		if !n.IsBroker() {
			broker = "-"
		}
		if !n.IsController() {
			ctrl += " (learner)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\n", n.ID, n.Roles, n.Pid(), broker, ctrl, n.PropertiesFile(), n.LogFile())
	}
	tw.Flush()
}

// watchNodes waits for ctx to end, saying so when a node exits on its
// own (the others keep running; its log says why).
func watchNodes(ctx context.Context, out io.Writer, c *localcluster.Cluster) {
	exited := make(chan *localcluster.Node, len(c.Nodes()))
	for _, n := range c.Nodes() {
		go func() {
			select {
			case <-n.Exited():
				exited <- n
			case <-ctx.Done():
			}
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-exited:
			fmt.Fprintf(out, "node %d exited on its own; see %s\n", n.ID, n.LogFile())
		}
	}
}
