package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Java entry points in the assembled libs/.
const (
	kafkaMain        = "kafka.Kafka"
	kafkaStorageTool = "kafka.tools.StorageTool"
	kafkaPerfMain    = "org.apache.kafka.tools.ProducerPerformance"
)

// assembleKafka resolves Kafka and kafka-tools with Maven into
// cacheDir/kafka-<version>/libs, once: a later run reuses the directory.
func assembleKafka(ctx context.Context, cacheDir, version string) (string, error) {
	root := filepath.Join(cacheDir, "kafka-"+version)
	libs := filepath.Join(root, "libs")
	if ok, _ := filepath.Glob(filepath.Join(libs, "kafka_2.13-"+version+".jar")); len(ok) == 1 {
		return libs, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("assemble kafka: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, "pom.xml"), []byte(kafkaPOM(version)), 0o644); err != nil {
		return "", fmt.Errorf("assemble kafka: %w", err)
	}
	tmp := libs + ".partial"
	os.RemoveAll(tmp)
	out, err := runTool(ctx, 15*time.Minute, nil, "mvn", "-B", "-q", "-f", filepath.Join(root, "pom.xml"),
		"dependency:copy-dependencies", "-DincludeScope=runtime", "-DoutputDirectory="+tmp)
	if err != nil {
		return "", fmt.Errorf("assemble kafka %s with Maven: %w\n%s", version, err, tail(out, 2000))
	}
	if err := os.Rename(tmp, libs); err != nil {
		return "", fmt.Errorf("assemble kafka: %w", err)
	}
	return libs, nil
}

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
	if k.libs, err = assembleKafka(ctx, e.cfg.cacheDir, e.cfg.kafkaVersion); err != nil {
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
	if err := os.WriteFile(props, []byte(formatProps(kafkaServerProps(k.logDirs, k.ports))), 0o644); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	if err := k.format(ctx, props); err != nil {
		return err
	}
	argv := append([]string{"java"}, kafkaJVMArgs("1g")...)
	argv = append(argv, "-Dkafka.logs.dir="+filepath.Join(k.dir, "logs"), "-cp", filepath.Join(k.libs, "*"), kafkaMain, props)
	if k.proc, err = e.procs.start(procSpec{name: "kafka", argv: argv, dir: k.dir, log: filepath.Join(k.dir, "kafka.out")}); err != nil {
		return err
	}
	return waitReady(ctx, k.proc, 3*time.Minute, metadataReady(k.addr))
}

// format runs Kafka's StorageTool on the node's log and metadata dirs.
func (k *kafkaSys) format(ctx context.Context, props string) error {
	id, err := newClusterID()
	if err != nil {
		return err
	}
	out, err := runTool(ctx, 3*time.Minute, nil, "java", "-Xmx256m", "-cp", filepath.Join(k.libs, "*"),
		kafkaStorageTool, "format", "-t", id, "-c", props)
	if err != nil {
		return fmt.Errorf("kafka storage format: %w\n%s", err, tail(out, 2000))
	}
	return nil
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

// tail returns the last n bytes of b as text.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
