package cluster_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// seenRecords counts the records of a topic each consumer read, by
// partition and offset.
type seenRecords struct {
	mu   sync.Mutex
	seen map[string]int // "p/offset" -> times read
	by   map[string]int // consumer -> records read
}

func newSeenRecords() *seenRecords {
	return &seenRecords{seen: map[string]int{}, by: map[string]int{}}
}

func (s *seenRecords) add(who string, partition int32, offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[fmt.Sprintf("%d/%d", partition, offset)]++
	s.by[who]++
}

func (s *seenRecords) distinct() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// check: offsets 0..perPartition-1 of each partition read exactly once.
func (s *seenRecords) check(t *testing.T, partitions int32, perPartition int64) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := int32(0); p < partitions; p++ {
		for o := int64(0); o < perPartition; o++ {
			if n := s.seen[fmt.Sprintf("%d/%d", p, o)]; n != 1 {
				t.Errorf("record %d/%d read %d times, want once", p, o, n)
			}
		}
	}
	if len(s.seen) != int(partitions)*int(perPartition) {
		t.Errorf("read %d distinct records, want %d", len(s.seen), int(partitions)*int(perPartition))
	}
}

// classicConsumer runs a franz-go consumer of the classic protocol that
// commits what it read before it lets a rebalance take partitions away.
func classicConsumer(t *testing.T, addr, groupID, topic, name string, seen *seenRecords) {
	cl := groupMember(t, addr, groupID, topic, nil, kgo.BlockRebalanceOnPoll(), kgo.DisableAutoCommit(),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(200*time.Millisecond))
	cx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cx.Err() == nil {
			fs := cl.PollFetches(cx)
			fs.EachRecord(func(r *kgo.Record) { seen.add(name, r.Partition, r.Offset) })
			if err := cl.CommitUncommittedOffsets(cx); err != nil && cx.Err() == nil {
				t.Logf("%s: commit: %v", name, err)
			}
			cl.AllowRebalance()
		}
	}()
	t.Cleanup(func() { stop(); <-done })
}

// groupType is the group's type and state as ListGroups v5 shows them.
func groupType(t *testing.T, adm *kadm.Client, groupID string) (string, string) {
	t.Helper()
	listed, err := adm.ListGroups(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	lg := listed[groupID]
	return lg.GroupType, lg.State
}

// Kafka: KIP-848's online upgrade and downgrade
// (group.consumer.migration.policy=bidirectional, the default). Two
// franz-go consumers of the classic protocol share a topic; Kafka's
// Java consumer joins with group.protocol=consumer and the group
// becomes a consumer group: the classic members stay, the broker
// assigns all three, and the Java consumer reads its share. When it
// leaves, the group is a classic group again and the franz-go
// consumers take every partition. Each record is read exactly once:
// every consumer commits before it gives a partition up.
func TestClassicGroupUpgradesAndDowngrades(t *testing.T) {
	libs := kafkaLibs(t)
	b := startBroker(t, t.TempDir(), groupProps(nil))
	const parts = 4
	createTopic(t, b.addr, "mig", parts, nil)
	produceSpread(t, b.addr, "mig", parts, 40)
	adm := kadm.NewClient(client(t, b.addr))

	seen := newSeenRecords()
	classicConsumer(t, b.addr, "mig-g", "mig", "franz-1", seen)
	classicConsumer(t, b.addr, "mig-g", "mig", "franz-2", seen)
	waitFor(t, 30*time.Second, "the classic consumers to read the first 40 records", func() bool { return seen.distinct() == 40 })
	if typ, _ := groupType(t, adm, "mig-g"); typ != "classic" {
		t.Fatalf("group type %q before the Java consumer joins, want classic", typ)
	}
	waitFor(t, 20*time.Second, "the first records' offsets committed", func() bool {
		offs, err := adm.FetchOffsets(ctx(t), "mig-g")
		if err != nil {
			return false
		}
		for p := int32(0); p < parts; p++ {
			if o, ok := offs.Lookup("mig", p); !ok || o.At != 10 {
				return false
			}
		}
		return true
	})

	cx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cx, "java", "-Xmx256m", "-cp", filepath.Join(libs, "*"),
		"org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", b.addr, "--topic", "mig",
		"--group", "mig-g", "--command-property", "group.protocol=consumer",
		"--formatter-property", "print.partition=true", "--formatter-property", "print.offset=true",
		"--timeout-ms", "30000")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() { // Partition:P	Offset:O	value
			var p int32
			var o int64
			if _, err := fmt.Sscanf(sc.Text(), "Partition:%d\tOffset:%d", &p, &o); err == nil {
				seen.add("java", p, o)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-read
		cmd.Wait()
		if t.Failed() {
			t.Logf("Java consumer's stderr:\n%s", stderr.String())
		}
	})

	waitFor(t, 60*time.Second, "the group to be a consumer group of three members", func() bool {
		typ, _ := groupType(t, adm, "mig-g")
		described, err := adm.DescribeConsumerGroups(ctx(t), "mig-g")
		return err == nil && typ == "consumer" && len(described["mig-g"].Members) == 3
	})
	waitFor(t, 30*time.Second, "the Java consumer to be assigned a partition", func() bool {
		described, err := adm.DescribeConsumerGroups(ctx(t), "mig-g")
		if err != nil {
			return false
		}
		for _, m := range described["mig-g"].Members {
			if m.ClientID == "console-consumer" {
				return len(m.Assignment) > 0
			}
		}
		return false
	})
	produceSpread(t, b.addr, "mig", parts, 40)
	waitFor(t, 60*time.Second, "the 80 records read", func() bool { return seen.distinct() == 80 })

	<-read // the Java consumer stops 30s after its last record, and leaves
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Java consumer: %v", err)
	}
	waitFor(t, 30*time.Second, "the group to be a classic group again, Stable", func() bool {
		typ, state := groupType(t, adm, "mig-g")
		return typ == "classic" && state == "Stable"
	})
	produceSpread(t, b.addr, "mig", parts, 40)
	waitFor(t, 60*time.Second, "the 120 records read", func() bool { return seen.distinct() == 120 })
	time.Sleep(time.Second) // a record read twice would show now
	seen.check(t, parts, 30)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.by["java"] == 0 || seen.by["franz-1"] == 0 || seen.by["franz-2"] == 0 {
		t.Fatalf("records read per consumer: %v, want every consumer to read some", seen.by)
	}
	t.Logf("records read per consumer: %v", seen.by)
}
