package segment_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// kafkaTxnFixture is a partition a Kafka 4.4.0 broker wrote with four
// transactions, the second aborted, and left at a clean shutdown
// (internal/kafkafixtures/README.md); its last transaction's records
// pass index.interval.bytes, so its .index has an entry.
const kafkaTxnFixture = "../internal/kafkafixtures/testdata/kafka-4.4.0-txn/txnfixture-0"

// Kafka: a segment that stops being the active one
// (LogSegment.onBecomeInactiveSegment, at a roll) or closes (close, at
// a clean shutdown) gets timeIndex.maybeAppend(maxTimestampSoFar,
// offsetOfMaxTimestamp, true) before its indexes are trimmed; a roll
// takes a producer snapshot named after the new segment, and a clean
// shutdown one at the log end; an ABORT marker adds the aborted
// transaction to the segment's .txnindex (UnifiedLog.updateTxnIndex).
// Kafka's batches appended to a Varve log as a follower appends them,
// rolled where Kafka rolled, then a clean Close, leave the files
// Kafka's broker left, byte for byte: every segment's one time-index
// entry is its batch of the largest timestamp (in txnfixture-0 the last
// COMMIT marker, not the last data batch).
func TestClosedSegmentFilesMatchKafkas(t *testing.T) {
	for _, part := range []string{
		kafkaTxnFixture,
		filepath.Join(kafkaFixtures, "fixture-0"),
		filepath.Join(kafkaFixtures, "fixture-1"),
	} {
		t.Run(filepath.Base(part), func(t *testing.T) {
			dir := t.TempDir()
			cfg := segment.DefaultConfig()
			// Kafka's producers stay unexpired (producer.id.expiration.ms)
			// whatever day the test runs.
			cfg.Now = func() time.Time { return time.UnixMilli(1796171725260).Add(time.Minute) }
			l := open(t, dir, cfg)
			names := appendKafkaSegments(t, l, part)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			for _, name := range names {
				want, err := os.ReadFile(filepath.Join(part, name))
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Errorf("Varve wrote no %s: %v", name, err)
					continue
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from Kafka's:\n got %x\nwant %x", name, got, want)
				}
			}
		})
	}
}

// appendKafkaSegments appends the batches of each .log file in part to
// l, rolling l at each segment's base offset, and returns the names of
// the segment files and producer snapshots in part.
func appendKafkaSegments(t *testing.T, l *segment.Log, part string) []string {
	t.Helper()
	ents, err := os.ReadDir(part)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".log", ".index", ".timeindex", ".txnindex", ".snapshot":
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for i, name := range names {
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		if i > 0 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		data, err := os.ReadFile(filepath.Join(part, name))
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < len(data); {
			h, err := record.ParseHeader(data[p:])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.AppendReplicated(data[p : p+int(h.Size())]); err != nil {
				t.Fatalf("%s: batch at %d: %v", name, h.BaseOffset, err)
			}
			p += int(h.Size())
		}
	}
	return names
}
