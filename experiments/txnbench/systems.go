package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/experiments/internal/kafkadist"
	"github.com/varve/varve/experiments/internal/varveproc"
	"github.com/varve/varve/internal/localcluster"
)

// singleNodeProps are the settings both systems run with, by Kafka's
// property names: the internal topics of a one-node cluster (replication
// factor 1, min ISR 1), everything else at its default (no
// log.flush.interval.*: no fsync on the produce path;
// transaction.state.log.num.partitions 50).
func singleNodeProps() map[string]string {
	return map[string]string{
		"offsets.topic.replication.factor":         "1",
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"group.initial.rebalance.delay.ms":         "0",
	}
}

// server is one started system: where clients reach it, how it runs,
// and how to stop it.
type server struct {
	name     string
	addr     string
	settings string
	stop     func()
}

// startVarve runs `varve server` (varveproc) with singleNodeProps.
func startVarve(bin string) (*server, error) {
	var ov []string
	for k, v := range singleNodeProps() {
		ov = append(ov, k+"="+v)
	}
	s, err := varveproc.Start(bin, varveproc.Options{Overrides: ov})
	if err != nil {
		return nil, fmt.Errorf("varve: %w", err)
	}
	return &server{name: sysVarve, addr: s.Addr, stop: s.Stop,
		settings: "`varve server` built from this tree, one node (broker and controller), internal topics with replication factor 1"}, nil
}

// startKafka runs one Apache Kafka KRaft combined node on loopback,
// formatted with Kafka's StorageTool, and waits until its broker is in
// the metadata.
func startKafka(ctx context.Context, cfg config, dir string) (*server, error) {
	libs, err := kafkadist.Assemble(ctx, cfg.cacheDir, cfg.kafkaVersion)
	if err != nil {
		return nil, err
	}
	broker, err := varveproc.FreePort()
	if err != nil {
		return nil, err
	}
	controller, err := varveproc.FreePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	propsFile := filepath.Join(dir, "server.properties")
	props := kafkaProps(filepath.Join(dir, "data"), broker, controller)
	if err := os.WriteFile(propsFile, []byte(kafkadist.FormatProps("experiments/txnbench", props)), 0o644); err != nil {
		return nil, err
	}
	id, err := kafkadist.NewClusterID()
	if err != nil {
		return nil, err
	}
	if err := kafkadist.Format(ctx, libs, id, propsFile); err != nil {
		return nil, err
	}
	out, err := os.Create(filepath.Join(dir, "kafka.out"))
	if err != nil {
		return nil, err
	}
	argv := kafkadist.ServerCommand(libs, cfg.kafkaHeap, filepath.Join(dir, "logs"), propsFile)
	addr := "127.0.0.1:" + strconv.Itoa(broker)
	p := &localcluster.Process{Name: "kafka", Bin: argv[0], Args: argv[1:], Addr: addr, Out: out}
	stop := func() { p.Stop(); out.Close() } // the JVM exits 143 after SIGTERM: not a failure here
	s := &server{name: sysKafka, addr: addr, stop: stop,
		settings: "Apache Kafka " + cfg.kafkaVersion + " from Maven Central, one KRaft combined node (broker and controller), JVM -Xmx" +
			cfg.kafkaHeap + " G1 (kafka-server-start.sh's options), internal topics with replication factor 1"}
	if err := p.Start(); err != nil && !p.Running() {
		out.Close()
		return nil, fmt.Errorf("kafka: %w (see %s)", err, out.Name())
	}
	if err := waitMetadata(ctx, addr, 3*time.Minute); err != nil {
		stop()
		return nil, fmt.Errorf("kafka: %w (see %s)", err, out.Name())
	}
	return s, nil
}

// kafkaProps is the server.properties of the one Kafka node.
func kafkaProps(logDir string, broker, controller int) map[string]string {
	props := map[string]string{
		"process.roles":                  "broker,controller",
		"node.id":                        "1",
		"controller.quorum.voters":       fmt.Sprintf("1@127.0.0.1:%d", controller),
		"listeners":                      fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", broker, controller),
		"advertised.listeners":           fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", broker),
		"controller.listener.names":      "CONTROLLER",
		"inter.broker.listener.name":     "PLAINTEXT",
		"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
		"log.dirs":                       logDir,
		"share.coordinator.state.topic.replication.factor": "1",
		"share.coordinator.state.topic.min.isr":            "1",
	}
	for k, v := range singleNodeProps() {
		props[k] = v
	}
	return props
}

// waitMetadata polls addr until a Metadata request lists a broker.
func waitMetadata(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := metadataOnce(ctx, addr)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no broker in the metadata of %s after %v: %w", addr, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func metadataOnce(ctx context.Context, addr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	if len(md.Brokers) == 0 {
		return fmt.Errorf("no brokers in the metadata")
	}
	return nil
}

// createTopics creates every topic the runs produce to on s.
func createTopics(ctx context.Context, s *server, partitions int32, topics []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, 1, nil, topics...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("%s: create topics %v: %w", s.name, topics, err)
	}
	return nil
}
