package segment_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// kafkaTxnFixture is a partition a Kafka 4.4.0 broker wrote with three
// transactions, the second aborted, and left at a clean shutdown
// (internal/kafkafixtures/README.md).
const kafkaTxnFixture = "../internal/kafkafixtures/testdata/kafka-4.4.0-txn/txnfixture-0"

// Kafka: LogSegment.close (onBecomeInactiveSegment for a rolled one)
// appends timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestamp,
// true) before it trims the indexes; the aborted transaction goes into
// the segment's .txnindex when its ABORT marker is appended
// (UnifiedLog.updateTxnIndex); and a clean shutdown leaves a producer
// snapshot at the log end. Kafka's batches appended to a Varve log as a
// follower appends them, then a clean Close, leave the same files as
// Kafka's broker left, byte for byte: the time index's one entry is
// the batch of the largest timestamp (the last COMMIT marker, not the
// last data batch).
func TestClosedSegmentFilesMatchKafkas(t *testing.T) {
	logBytes, err := os.ReadFile(filepath.Join(kafkaTxnFixture, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := open(t, dir, segment.DefaultConfig())
	for p := 0; p < len(logBytes); {
		h, err := record.ParseHeader(logBytes[p:])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendReplicated(logBytes[p : p+int(h.Size())]); err != nil {
			t.Fatalf("batch at %d: %v", h.BaseOffset, err)
		}
		p += int(h.Size())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"00000000000000000000.log",
		"00000000000000000000.index",
		"00000000000000000000.timeindex",
		"00000000000000000000.txnindex",
		"00000000000000000012.snapshot",
	} {
		want, err := os.ReadFile(filepath.Join(kafkaTxnFixture, name))
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
}
