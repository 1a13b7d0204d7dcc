package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/varve/varve/experiments/internal/kafkadist"
	"github.com/varve/varve/internal/localcluster"
)

// startKafka runs Apache Kafka as three KRaft combined nodes on
// 127.0.0.1-3, laid out on the same addresses and ports scheme as
// Varve's nodes, each formatted with Kafka's StorageTool for one
// cluster id, and waits until all three brokers are unfenced.
func startKafka(ctx context.Context, cfg config, dir string) (*system, func(), error) {
	fmt.Fprintln(os.Stderr, "== assembling Apache Kafka", cfg.kafkaVersion, "with Maven (cached after the first run)")
	libs, err := kafkadist.Assemble(ctx, cfg.cacheDir, cfg.kafkaVersion)
	if err != nil {
		return nil, nil, err
	}
	layout, err := localcluster.New(localcluster.Options{Nodes: 3, Dir: filepath.Join(dir, sysKafka)})
	if err != nil {
		return nil, nil, err
	}
	id, err := kafkadist.NewClusterID()
	if err != nil {
		return nil, nil, err
	}
	s := &system{name: sysKafka, nodes: map[int32]node{}, addrs: map[int32]string{}, logs: map[int32]string{},
		settings: "Apache Kafka " + cfg.kafkaVersion + " from Maven Central, three KRaft combined nodes " +
			"(process.roles=broker,controller) on 127.0.0.1-3, static controller.quorum.voters, JVM -Xmx" +
			cfg.kafkaHeap + " G1 (kafka-server-start.sh's options)"}
	var logs []*os.File
	stop := func() {
		s.stopAll()
		for _, f := range logs {
			f.Close()
		}
	}
	for _, n := range layout.Nodes() {
		p, f, err := kafkaNode(ctx, cfg, libs, id, layout, n)
		if err != nil {
			stop()
			return nil, nil, err
		}
		logs = append(logs, f)
		nid := int32(n.ID)
		s.nodes[nid], s.addrs[nid], s.logs[nid] = p, n.Addr(), f.Name()
	}
	if err := s.startAll(); err != nil {
		stop()
		return nil, nil, fmt.Errorf("kafka: %w", err)
	}
	if err := waitBrokers(ctx, s, cfg.trialTimeout); err != nil {
		stop()
		return nil, nil, fmt.Errorf("kafka: %w", err)
	}
	return s, stop, nil
}

// kafkaNode writes node n's server.properties, formats its storage and
// returns the process that runs it, with its output in a file.
func kafkaNode(ctx context.Context, cfg config, libs, clusterID string, c *localcluster.Cluster, n *localcluster.Node) (node, *os.File, error) {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	props := n.PropertiesFile()
	text := kafkadist.FormatProps("experiments/failover", kafkaProps(c, n, cfg.profile))
	if err := os.WriteFile(props, []byte(text), 0o644); err != nil {
		return nil, nil, err
	}
	if err := kafkadist.Format(ctx, libs, clusterID, props); err != nil {
		return nil, nil, err
	}
	f, err := os.Create(n.LogFile())
	if err != nil {
		return nil, nil, err
	}
	argv := kafkadist.ServerCommand(libs, cfg.kafkaHeap, filepath.Join(n.Dir, "logs"), props)
	p := &localcluster.Process{Name: "kafka" + n.Name(), Bin: argv[0], Args: argv[1:], Addr: n.Addr(), Out: f}
	return &jvmNode{Process: p, startTimeout: cfg.trialTimeout}, f, nil
}

// jvmNode is a Kafka node's process, given longer than
// localcluster.StartTimeout to open its broker listener: three JVMs
// starting at once on a small shared machine can take longer.
type jvmNode struct {
	*localcluster.Process
	startTimeout time.Duration
}

func (j *jvmNode) Start() error {
	err := j.Process.Start()
	if err == nil || !j.Running() {
		return err
	}
	deadline := time.Now().Add(j.startTimeout - localcluster.StartTimeout)
	for j.Running() && time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", j.Addr, time.Second); err == nil {
			return c.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// Stop shuts the node down with SIGTERM, Kafka's controlled shutdown,
// and waits for it to exit (killing it after localcluster.StopTimeout).
// The JVM exits with status 143 (128+SIGTERM) after a clean shutdown,
// so the status is not an error here.
func (j *jvmNode) Stop() error {
	if !j.Running() {
		return nil
	}
	exited := j.Exited()
	if err := j.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-exited:
		return nil
	case <-time.After(localcluster.StopTimeout):
		return errors.Join(fmt.Errorf("%s: no exit %v after SIGTERM", j.Name, localcluster.StopTimeout), j.Kill())
	}
}

// kafkaProps is a KRaft combined node of a three-node cluster with the
// test profile: the same listeners, voters and internal-topic
// replication as localcluster writes for Varve.
func kafkaProps(c *localcluster.Cluster, n *localcluster.Node, p profile) map[string]string {
	var voters []string
	for _, o := range c.Nodes() {
		voters = append(voters, strconv.Itoa(o.ID)+"@"+o.ControllerAddr())
	}
	props := map[string]string{
		"process.roles":                            "broker,controller",
		"node.id":                                  strconv.Itoa(n.ID),
		"controller.quorum.voters":                 strings.Join(voters, ","),
		"listeners":                                "PLAINTEXT://" + n.Addr() + ",CONTROLLER://" + n.ControllerAddr(),
		"advertised.listeners":                     "PLAINTEXT://" + n.Addr(),
		"controller.listener.names":                "CONTROLLER",
		"inter.broker.listener.name":               "PLAINTEXT",
		"listener.security.protocol.map":           "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs":                                 n.LogDir(),
		"offsets.topic.replication.factor":         "3",
		"transaction.state.log.replication.factor": "3",
		"transaction.state.log.min.isr":            "2",
		"group.initial.rebalance.delay.ms":         "0",
	}
	for k, v := range p.props() {
		props[k] = v
	}
	return props
}
