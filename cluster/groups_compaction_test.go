package cluster_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/varve/varve/record"
)

// segmentsOf returns the bytes of each segment file of a partition
// directory, skipping those the cleaner swapped away meanwhile.
func segmentsOf(dir string) [][]byte {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var out [][]byte
	for _, l := range logs {
		if data, err := os.ReadFile(l); err == nil {
			out = append(out, data)
		}
	}
	return out
}

// countRecords counts the records in a partition directory's segments.
func countRecords(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, data := range segmentsOf(dir) {
		for _, err := range record.Records(data) {
			if err != nil {
				break
			}
			n++
		}
	}
	return n
}

// Kafka: __consumer_offsets is cleanup.policy=compact, so the log cleaner
// keeps only the latest commit of each partition; a restart after
// compaction still finds the last commit.
func TestGroupCommitsAreCompacted(t *testing.T) {
	dir := t.TempDir()
	props := groupProps(map[string]string{
		"offsets.topic.num.partitions":    "1",
		"offsets.topic.segment.bytes":     "1024",
		"log.cleaner.backoff.ms":          "50",
		"log.cleaner.min.cleanable.ratio": "0.01",
	})
	b := startBroker(t, dir, props)
	createTopic(t, b.addr, "compacted", 1, nil)
	adm := kadm.NewClient(client(t, b.addr))
	const commits = 200
	for i := 1; i <= commits; i++ {
		commit := kadm.Offsets{}
		commit.Add(kadm.Offset{Topic: "compacted", Partition: 0, At: int64(i), LeaderEpoch: -1})
		if err := adm.CommitAllOffsets(ctx(t), "g-compacted", commit); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	pdir := filepath.Join(dir, "__consumer_offsets-0")
	waitFor(t, 20*time.Second, "the cleaner to compact old commits", func() bool {
		return countRecords(t, pdir) < commits/4
	})
	b.stop(t)
	b = startBroker(t, dir, props)
	offs, err := kadm.NewClient(client(t, b.addr)).FetchOffsets(ctx(t), "g-compacted")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("compacted", 0); !ok || o.At != commits {
		t.Fatalf("after compaction and a restart the commit is %d, want %d", o.At, commits)
	}
}
