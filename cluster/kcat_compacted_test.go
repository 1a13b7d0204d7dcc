package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/record"
)

// emptyBatches counts the batches without records in a partition
// directory's segments.
func emptyBatches(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, data := range segmentsOf(dir) {
		for p := 0; p < len(data); {
			h, size, err := record.NextBatch(data[p:], len(data)-p)
			if err != nil {
				break
			}
			if h.RecordCount == 0 {
				n++
			}
			p += size
		}
	}
	return n
}

// Kafka: the cleaner keeps a batch emptied of records only when it holds
// its producer's last sequence (MemoryRecords.filterTo, BatchRetention
// RETAIN_EMPTY); every other emptied batch goes, and a segment may be
// left empty. librdkafka 2.0 (Debian's kcat) moves its fetch position
// past an empty batch's last offset but doubles its fetch size after
// each response that yields no message, and stops with "Message at
// offset ... might be too large to fetch" past 1 GiB: a log of segments
// holding nothing but an empty batch each stopped it after ten. Here one
// idempotent producer's batch is superseded whole (its empty header
// stays), and another's 600 batches fill 20 segments that compaction
// empties; kcat reads the rest to the end, before and after a restart.
func TestKcatReadsPastCompactedEmptyBatches(t *testing.T) {
	kcat := kcatPath(t)
	dir := t.TempDir()
	props := map[string]string{"log.cleaner.backoff.ms": "2000"} // one pass after the writes
	b := startBroker(t, dir, props)
	compact, segBytes, ratio := "compact", "4096", "0.01"
	createTopic(t, b.addr, "kcat-compacted", 1, map[string]*string{
		"cleanup.policy": &compact, "segment.bytes": &segBytes, "min.cleanable.dirty.ratio": &ratio,
	})
	const batches, keys = 600, 4
	want := map[string]string{}
	produce := func(cl *kgo.Client, n int, key func(i, k int) int) {
		for i := range n {
			var recs []*kgo.Record
			for k := range keys {
				key, val := fmt.Sprintf("k%d", key(i, k)), fmt.Sprintf("v%d-%d-%s", i, k, strings.Repeat("x", 200))
				recs = append(recs, &kgo.Record{Key: []byte(key), Value: []byte(val)})
				want[key] = val
			}
			produceSync(t, cl, recs...) // one batch per call
		}
	}
	// franz-go's producer is idempotent by default: each client has its
	// own producer id.
	produce(client(t, b.addr, kgo.DefaultProduceTopic("kcat-compacted")), 1, func(_, k int) int { return k })
	produce(client(t, b.addr, kgo.DefaultProduceTopic("kcat-compacted")), batches, func(i, k int) int { return (i*keys + k) % (keys * 3) })
	pdir := filepath.Join(dir, "kcat-compacted-0")
	waitFor(t, 30*time.Second, "the cleaner to empty the superseded batches", func() bool {
		return countRecords(t, pdir) < batches*keys/4 && emptyBatches(t, pdir) == 1
	})
	readAll := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, kcat, "-b", b.addr, "-t", "kcat-compacted", "-C", "-e", "-o", "beginning",
			"-f", "%k=%s\n")
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || strings.Contains(stderr.String(), "ERROR") {
			t.Fatalf("kcat -C -e: %v\n%s", err, stderr.String())
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			k, v, _ := strings.Cut(line, "=")
			got[k] = v // later offsets win, as for any reader of a compacted topic
		}
		if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
			t.Fatalf("kcat read %v; want the last value of each key %v", sorted(got), sorted(want))
		}
	}
	readAll()
	b.stop(t)
	b = startBroker(t, dir, props)
	readAll()
}

func sorted(m map[string]string) []string {
	var s []string
	for k, v := range m {
		s = append(s, k+"="+v)
	}
	sort.Strings(s)
	return s
}
