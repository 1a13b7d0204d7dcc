package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// javaKafkaVersion is the Kafka release whose Java client the KIP-848
// test runs, the one the experiments assemble.
const javaKafkaVersion = "4.4.0"

// kafkaLibs is a directory of Kafka's jars (kafka-tools and its
// dependencies): the experiments' cache (…/varve-kafka/kafka-V/libs)
// if it holds one, else assembled there with Maven. The test skips on a
// developer machine without Java or Maven and fails under CI.
func kafkaLibs(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "varve-kafka", "kafka-"+javaKafkaVersion)
	libs := filepath.Join(root, "libs")
	_, javaErr := exec.LookPath("java")
	if jars, _ := filepath.Glob(filepath.Join(libs, "kafka-tools-*.jar")); len(jars) > 0 && javaErr == nil {
		return libs
	}
	_, mvnErr := exec.LookPath("mvn")
	if javaErr != nil || mvnErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Java and Maven are needed to run Kafka's Java consumer; CI must have them")
		}
		t.Skip("Java or Maven not installed")
	}
	pom := `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>varve.tests</groupId><artifactId>kafka-tools</artifactId><version>1</version><packaging>pom</packaging>
<dependencies><dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>` +
		javaKafkaVersion + `</version></dependency></dependencies></project>`
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	pomFile := filepath.Join(root, "tools-pom.xml")
	if err := os.WriteFile(pomFile, []byte(pom), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := libs + ".partial"
	os.RemoveAll(tmp)
	cx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(cx, "mvn", "-B", "-q", "-f", pomFile, "dependency:copy-dependencies",
		"-DincludeScope=runtime", "-DoutputDirectory="+tmp).CombinedOutput()
	if err != nil {
		t.Fatalf("assemble Kafka %s with Maven: %v\n%s", javaKafkaVersion, err, out)
	}
	if err := os.Rename(tmp, libs); err != nil {
		t.Fatal(err)
	}
	return libs
}

// consoleConsume runs Kafka's console consumer with
// group.protocol=consumer until it has read n records, and returns
// their values.
func consoleConsume(t *testing.T, libs, addr, groupID, topic string, n int) []string {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cx, "java", "-Xmx256m", "-cp", filepath.Join(libs, "*"),
		"org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", addr, "--topic", topic,
		"--group", groupID, "--from-beginning", "--max-messages", strconv.Itoa(n),
		"--command-property", "group.protocol=consumer", "--timeout-ms", "60000")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("console consumer: %v\n%s\n%s", err, out, stderr)
	}
	lines := strings.Fields(string(out))
	if len(lines) != n {
		t.Fatalf("console consumer printed %d records, want %d: %q", len(lines), n, out)
	}
	return lines
}

// Kafka: KIP-848 with Kafka's own Java consumer (group.protocol=consumer,
// which fails against a broker without ConsumerGroupHeartbeat with
// "cluster does not support the new CONSUMER group protocol"). The
// consumer reads every record, commits on close, and the group is a
// consumer group; a second run of the same group resumes after the
// committed offsets and reads only the new records.
func TestJavaConsumerGroupProtocol(t *testing.T) {
	libs := kafkaLibs(t)
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "java-cg", 3, nil)
	produceSpread(t, b.addr, "java-cg", 3, 30)

	got := consoleConsume(t, libs, b.addr, "java-g", "java-cg", 30)
	slices.Sort(got)
	if len(slices.Compact(got)) != 30 {
		t.Fatalf("first run read duplicates: %v", got)
	}
	adm := kadm.NewClient(client(t, b.addr))
	listed, err := adm.ListGroups(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if lg := listed["java-g"]; lg.GroupType != "consumer" {
		t.Fatalf("java-g listed as %+v, want a consumer group", lg)
	}
	offs, err := adm.FetchOffsets(ctx(t), "java-g")
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 3; p++ {
		if o, ok := offs.Lookup("java-cg", p); !ok || o.At != 10 {
			t.Fatalf("partition %d committed at %+v, want 10", p, o)
		}
	}

	// The second batch's values ("p/i", i < 6) repeat some of the first
	// batch's, but a consumer that started over would print the first
	// records of each partition ("0/9" and the like) instead.
	produceSpread(t, b.addr, "java-cg", 3, 6)
	again := consoleConsume(t, libs, b.addr, "java-g", "java-cg", 6)
	slices.Sort(again)
	if want := []string{"0/0", "0/3", "1/1", "1/4", "2/2", "2/5"}; !slices.Equal(again, want) {
		t.Fatalf("second run read %v, want only the new records %v", again, want)
	}
}
