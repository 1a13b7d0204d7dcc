package cluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// liveDirs counts a topic's partition directories not yet renamed for
// deletion.
func liveDirs(t *testing.T, dir, topic string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), topic+"-") && !strings.HasSuffix(e.Name(), "-delete") {
			n++
		}
	}
	return n
}

// Kafka: a deleted topic stays deleted. The broker is killed with -9
// while DeleteTopics is removing a topic's partitions; after a restart
// the topic is gone and none of its partitions is left or recreated.
// Before, the remaining partitions came back as a topic without its
// configuration.
func TestKillNineDuringDeleteTopicsNeverResurrects(t *testing.T) {
	const partitions = 300
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	c := startChild(t, dir)
	retention := "1000"
	createTopic(t, c.addr, "doomed", partitions, map[string]*string{"retention.ms": &retention})
	adm := kadm.NewClient(client(t, c.addr))
	go adm.DeleteTopics(ctx(t), "doomed")
	deadline := time.Now().Add(30 * time.Second)
	left := partitions
	for left == partitions && time.Now().Before(deadline) {
		left = liveDirs(t, data, "doomed")
	}
	c.kill()
	if left == 0 || left == partitions {
		t.Logf("killed with %d of %d partitions left: not midway", left, partitions)
	}

	c = startChild(t, dir)
	defer c.kill()
	md, err := kadm.NewClient(client(t, c.addr)).Metadata(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := md.Topics["doomed"]; ok {
		t.Fatalf("the deleted topic came back (killed with %d of %d partitions left)", left, partitions)
	}
	if n := liveDirs(t, data, "doomed"); n != 0 {
		t.Fatalf("%d partition directories of the deleted topic remain", n)
	}
}
