package cluster_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafkaConfigs runs Kafka's kafka-configs (ConfigCommand) against addr.
func kafkaConfigs(t *testing.T, libs, addr string, args ...string) (string, error) {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append([]string{"-Xmx256m", "-cp", filepath.Join(libs, "*"), "org.apache.kafka.tools.ConfigCommand",
		"--bootstrap-server", addr}, args...)
	out, err := exec.CommandContext(cx, "java", all...).CombinedOutput()
	return string(out), err
}

// Kafka: kafka-configs, Kafka 4.4's own ConfigCommand, against a Varve
// node: --alter --add-config on a broker and on the broker defaults,
// --describe --all with sources and synonyms, and the refusal of a
// property that cannot change at run time with Kafka's message.
func TestKafkaConfigsCommand(t *testing.T) {
	libs := kafkaLibs(t)
	b := startBroker(t, t.TempDir(), nil)
	if out, err := kafkaConfigs(t, libs, b.addr, "--alter", "--entity-type", "brokers", "--entity-name", "1",
		"--add-config", "log.retention.ms=3600000,log.cleaner.threads=2"); err != nil || !strings.Contains(out, "Completed updating config for broker 1.") {
		t.Fatalf("--alter broker 1: %v\n%s", err, out)
	}
	if out, err := kafkaConfigs(t, libs, b.addr, "--alter", "--entity-type", "brokers", "--entity-default",
		"--add-config", "log.retention.bytes=1000000"); err != nil || !strings.Contains(out, "Completed updating default config for brokers in the cluster.") {
		t.Fatalf("--alter --entity-default: %v\n%s", err, out)
	}
	out, err := kafkaConfigs(t, libs, b.addr, "--describe", "--entity-type", "brokers", "--entity-name", "1", "--all")
	if err != nil {
		t.Fatalf("--describe --all: %v\n%s", err, out)
	}
	for _, want := range []string{
		"All configs for broker 1 are:",
		"log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=3600000, DEFAULT_CONFIG:log.retention.hours=168}",
		"log.retention.bytes=1000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.bytes=1000000, DEFAULT_CONFIG:log.retention.bytes=-1}",
		"log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, DEFAULT_CONFIG:log.cleaner.threads=1}",
		"num.partitions=1 sensitive=false synonyms={DEFAULT_CONFIG:num.partitions=1}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--describe --all lacks %q", want)
		}
	}
	out, err = kafkaConfigs(t, libs, b.addr, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "num.partitions=3")
	if err == nil || !strings.Contains(out, "InvalidRequestException: Cannot update these configs dynamically: Set(num.partitions)") {
		t.Errorf("--alter num.partitions: %v\n%s", err, out)
	}
	// What the tool set is what the node runs with.
	c, _ := brokerConfig(t, kadm.NewClient(client(t, b.addr)), "log.retention.ms", 1)
	if c.MaybeValue() != "3600000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("log.retention.ms = %q from %v", c.MaybeValue(), c.Source)
	}
}
