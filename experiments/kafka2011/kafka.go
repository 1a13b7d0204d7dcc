package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/experiments/internal/kafkadist"
)

// kafkaSys is Apache Kafka in KRaft mode, one combined node.
type kafkaSys struct {
	kafkaProto
	libs  string
	dir   string
	proc  *proc
	ports kafkaPorts
}

func (k *kafkaSys) name() string            { return sysKafka }
func (k *kafkaSys) dataDir() string         { return k.logDirs }
func (k *kafkaSys) pgid() int               { return pgidOf(k.proc) }
func (k *kafkaSys) tests(e *env) []testCase { return protoTests(&k.kafkaProto, e) }
func (k *kafkaSys) settings(e *env) string {
	return "Apache Kafka " + e.cfg.kafkaVersion + " from Maven Central, KRaft (one node, broker+controller), " +
		"JVM -Xmx1g G1, Kafka's defaults (no log.flush.interval.*: no fsync on the produce path)"
}

// start assembles Kafka, formats its storage and starts the node.
func (k *kafkaSys) start(ctx context.Context, e *env) error {
	var err error
	if k.libs, err = kafkadist.Assemble(ctx, e.cfg.cacheDir, e.cfg.kafkaVersion); err != nil {
		return err
	}
	k.dir = filepath.Join(e.tmp, "kafka")
	k.logDirs = filepath.Join(k.dir, "data")
	if err := os.MkdirAll(k.logDirs, 0o755); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	if k.ports.broker, err = freePort(); err != nil {
		return err
	}
	if k.ports.controller, err = freePort(); err != nil {
		return err
	}
	k.addr = loopback(k.ports.broker)
	props := filepath.Join(k.dir, "server.properties")
	if err := os.WriteFile(props, []byte(kafkadist.FormatProps("experiments/kafka2011", kafkaServerProps(k.logDirs, k.ports))), 0o644); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	if err := k.format(ctx, props); err != nil {
		return err
	}
	argv := kafkadist.ServerCommand(k.libs, "1g", filepath.Join(k.dir, "logs"), props)
	if k.proc, err = e.procs.start(procSpec{name: "kafka", argv: argv, dir: k.dir, log: filepath.Join(k.dir, "kafka.out")}); err != nil {
		return err
	}
	return waitReady(ctx, k.proc, 3*time.Minute, metadataReady(k.addr))
}

// format runs Kafka's StorageTool on the node's log and metadata dirs.
func (k *kafkaSys) format(ctx context.Context, props string) error {
	id, err := kafkadist.NewClusterID()
	if err != nil {
		return err
	}
	return kafkadist.Format(ctx, k.libs, id, props)
}

// metadataReady succeeds once the broker answers a metadata request
// listing at least one broker.
func metadataReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0))
		if err != nil {
			return err
		}
		defer cl.Close()
		md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		if err != nil {
			return err
		}
		if len(md.Brokers) == 0 {
			return fmt.Errorf("no brokers in metadata")
		}
		return nil
	}
}
