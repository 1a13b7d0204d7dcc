package cluster_test

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// groupChildEnv makes the test binary a broker with group settings for
// tests and every append fsynced; the child of kill_test.go has Kafka's
// default group settings (a 3 s initial rebalance delay), too slow here.
// init runs before TestMain, so this needs no change there.
const groupChildEnv = "VARVE_TEST_GROUP_BROKER_DIR"

func init() {
	if dir := os.Getenv(groupChildEnv); dir != "" {
		runGroupChildBroker(dir)
	}
}

// runGroupChildBroker serves dir until killed and writes its address to
// dir/addr. It never returns.
func runGroupChildBroker(dir string) {
	props := groupProps(map[string]string{
		"log.dirs": filepath.Join(dir, "data"), "listeners": "PLAINTEXT://127.0.0.1:0",
		"varve.metrics.listener": "", "log.flush.interval.messages": "1",
	})
	cfg, err := config.Parse(props)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	b, err := cluster.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err == nil {
		err = b.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmp := filepath.Join(dir, "addr.tmp")
	os.WriteFile(tmp, []byte(b.Addr().String()), 0o644)
	os.Rename(tmp, filepath.Join(dir, "addr"))
	select {}
}

func startGroupChild(t *testing.T, dir string) *child {
	t.Helper()
	os.Remove(filepath.Join(dir, "addr"))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), groupChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd}
	t.Cleanup(c.kill)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if a, err := os.ReadFile(filepath.Join(dir, "addr")); err == nil {
			c.addr = string(a)
			return c
		}
		if time.Now().After(deadline) {
			t.Fatal("child broker did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kafka: committed offsets are records in __consumer_offsets, so with
// flush.messages=1 an acknowledged commit survives the broker's death.
// A member commits what it processed and the broker is killed with -9
// while the member is still in the group; after a restart the offsets
// are there and a new member resumes exactly after them.
func TestGroupOffsetsSurviveKillNine(t *testing.T) {
	dir := t.TempDir()
	c := startGroupChild(t, dir)
	createTopic(t, c.addr, "durable-group", 4, nil)
	const total = 200
	produceSpread(t, c.addr, "durable-group", 4, total)

	first := groupMember(t, c.addr, "g-durable", "durable-group", nil, kgo.DisableAutoCommit(), kgo.RetryTimeout(time.Second))
	seen := map[string]int{}
	var processed []*kgo.Record
	pollUntil(t, first, 20*time.Second, func(r *kgo.Record) bool {
		processed = append(processed, r)
		seen[string(r.Value)]++
		return len(processed) == 90
	})
	if err := first.CommitRecords(ctx(t), processed...); err != nil {
		t.Fatalf("commit: %v", err)
	}
	c.kill()
	first.Close()

	committed := map[int32]int64{}
	for _, r := range processed {
		committed[r.Partition] = max(committed[r.Partition], r.Offset+1)
	}
	c = startGroupChild(t, dir)
	offs, err := kadm.NewClient(client(t, c.addr)).FetchOffsets(ctx(t), "g-durable")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range committed {
		if o, ok := offs.Lookup("durable-group", p); !ok || o.At != want {
			t.Fatalf("after kill -9, partition %d committed at %d, want %d", p, o.At, want)
		}
	}
	// The dead member is still in the stored group: the new member's
	// join waits until its session (1 s) expires.
	second := groupMember(t, c.addr, "g-durable", "durable-group", nil, kgo.DisableAutoCommit())
	rest := 0
	pollUntil(t, second, 30*time.Second, func(r *kgo.Record) bool {
		if r.Offset < committed[r.Partition] {
			t.Fatalf("record %s at %d/%d was committed before the kill and is read again", r.Value, r.Partition, r.Offset)
		}
		seen[string(r.Value)]++
		rest++
		return len(processed)+rest == total
	})
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("record %s read %d times", v, n)
		}
	}
}
