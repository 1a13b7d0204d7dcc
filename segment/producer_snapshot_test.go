package segment_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/segment"
)

// snapshotEntry is one entry of Kafka's producer snapshot v1, written
// out field by field here, independently of the package's encoder.
type snapshotEntry struct {
	pid                   int64
	epoch                 int16
	lastSeq               int32
	lastOffset            int64
	offsetDelta           int32
	timestamp             int64
	coordinatorEpoch      int32
	currentTxnFirstOffset int64
}

// kafkaSnapshot encodes entries as Kafka's ProducerStateManager.writeSnapshot
// does: version i16 = 1, crc u32 (CRC-32C of everything after it), an
// int32 entry count, then the entries' fields in schema order.
func kafkaSnapshot(entries ...snapshotEntry) []byte {
	be := binary.BigEndian
	b := be.AppendUint16(nil, 1)
	b = be.AppendUint32(b, 0)
	b = be.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = be.AppendUint64(b, uint64(e.pid))
		b = be.AppendUint16(b, uint16(e.epoch))
		b = be.AppendUint32(b, uint32(e.lastSeq))
		b = be.AppendUint64(b, uint64(e.lastOffset))
		b = be.AppendUint32(b, uint32(e.offsetDelta))
		b = be.AppendUint64(b, uint64(e.timestamp))
		b = be.AppendUint32(b, uint32(e.coordinatorEpoch))
		b = be.AppendUint64(b, uint64(e.currentTxnFirstOffset))
	}
	be.PutUint32(b[2:], crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func snapshotFile(dir string, off int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d.snapshot", off))
}

// Kafka: ProducerStateManager.writeSnapshot. The snapshot the log writes
// is byte for byte the one Kafka writes for the same state (entries in
// producer id order).
func TestProducerSnapshotBytesMatchKafkaLayout(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	const ts = 1_700_000_000_000
	mustAppend(t, l, idem{pid: 9, epoch: 3, seq: 10, n: 4, ts: ts})
	mustAppend(t, l, idem{pid: 2, epoch: 0, seq: 0, n: 1, ts: ts + 5})
	mustAppend(t, l, idem{pid: 9, epoch: 3, seq: 14, n: 2, ts: ts + 9})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(snapshotFile(dir, 7))
	if err != nil {
		t.Fatal(err)
	}
	want := kafkaSnapshot(
		snapshotEntry{pid: 2, epoch: 0, lastSeq: 0, lastOffset: 4, offsetDelta: 0, timestamp: ts + 5, coordinatorEpoch: -1, currentTxnFirstOffset: -1},
		snapshotEntry{pid: 9, epoch: 3, lastSeq: 15, lastOffset: 6, offsetDelta: 1, timestamp: ts + 9, coordinatorEpoch: -1, currentTxnFirstOffset: -1},
	)
	if string(got) != string(want) {
		t.Fatalf("snapshot bytes\n got %x\nwant %x", got, want)
	}
}

// Kafka: ProducerStateManager.readSnapshot. A Kafka-written snapshot
// decodes field by field; an entry whose last offset is -1 (a producer
// whose only record is a transaction marker) remembers no batch.
func TestDecodeKafkaProducerSnapshot(t *testing.T) {
	data := kafkaSnapshot(
		snapshotEntry{pid: 5, epoch: 1, lastSeq: 99, lastOffset: 1000, offsetDelta: 9, timestamp: 42, coordinatorEpoch: 3, currentTxnFirstOffset: 991},
		snapshotEntry{pid: 6, epoch: 7, lastSeq: -1, lastOffset: -1, offsetDelta: 0, timestamp: 43, coordinatorEpoch: 8, currentTxnFirstOffset: -1},
	)
	states, err := segment.DecodeProducerSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	want0 := segment.ProducerState{ProducerID: 5, Epoch: 1, LastSequence: 99, LastOffset: 1000, LastTimestamp: 42,
		CoordinatorEpoch: 3, CurrentTxnFirstOffset: 991,
		Batches: []segment.ProducerBatch{{FirstSequence: 90, LastSequence: 99, FirstOffset: 991, LastOffset: 1000, MaxTimestamp: 42}}}
	want1 := segment.ProducerState{ProducerID: 6, Epoch: 7, LastSequence: -1, LastOffset: -1, LastTimestamp: 43,
		CoordinatorEpoch: 8, CurrentTxnFirstOffset: -1}
	if len(states) != 2 || fmt.Sprint(states[0]) != fmt.Sprint(want0) || fmt.Sprint(states[1]) != fmt.Sprint(want1) {
		t.Fatalf("decoded %+v\nwant %+v\n     %+v", states, want0, want1)
	}
}

// recrc recomputes a snapshot's CRC, so that a damage other than to the
// CRC is what the reader finds.
func recrc(b []byte) []byte {
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// corruptions are the ways a snapshot file is damaged, by name.
var corruptions = map[string]func([]byte) []byte{
	"bad_crc":       func(b []byte) []byte { b[len(b)-3] ^= 0x40; return b },
	"bad_version":   func(b []byte) []byte { b[1] = 2; return b },
	"torn_entry":    func(b []byte) []byte { return recrc(b[:len(b)-10]) },
	"torn_header":   func(b []byte) []byte { return b[:7] },
	"empty_file":    func(b []byte) []byte { return nil },
	"count_too_big": func(b []byte) []byte { binary.BigEndian.PutUint32(b[6:], 1000); return recrc(b) },
	"negative_count": func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[6:], 0xFFFFFFFF)
		return recrc(b)
	},
}

// Kafka: loadFromSnapshot. A corrupt snapshot is logged, deleted and
// skipped; the state comes from the next older one and a replay of the
// log after it. The replay is visible: retries of batches after the
// older snapshot are duplicates again, which a load from the newest
// snapshot alone could not give.
func TestCorruptProducerSnapshotIsIgnored(t *testing.T) {
	for name, corrupt := range corruptions {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l := open(t, dir, quietConfig())
			ps := produceSeq(t, l, idem{pid: 7, seq: 0, n: 2}, 2)
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, produceSeq(t, l, ps[1].b.next(1), 3)...)
			end := l.EndOffset()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(snapshotFile(dir, end))
			if err != nil {
				t.Fatal(err)
			}
			damaged := corrupt(data)
			if _, err := segment.DecodeProducerSnapshot(damaged); !errors.Is(err, segment.ErrCorruptSnapshot) {
				t.Fatalf("decode of the damaged file: %v, want ErrCorruptSnapshot", err)
			}
			if err := os.WriteFile(snapshotFile(dir, end), damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			l = open(t, dir, quietConfig())
			defer l.Close()
			for _, p := range ps[1:] {
				mustDuplicate(t, l, p.b, p.first, p.last)
			}
			if _, err := segment.ReadProducerSnapshot(nil, snapshotFile(dir, end)); err != nil {
				t.Fatalf("the rebuild did not replace the damaged snapshot: %v", err)
			}
		})
	}
}

// Kafka: with no readable snapshot the state is rebuilt from the log
// start offset.
func TestAllProducerSnapshotsCorrupt(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	var ps []produced
	b := idem{pid: 7, seq: 0, n: 1}
	for i := 0; i < 3; i++ {
		ps = append(ps, produceSeq(t, l, b, 2)...)
		b = ps[len(ps)-1].b.next(1)
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	offs := snapshotOffsets(t, dir)
	if len(offs) < 3 {
		t.Fatalf("snapshots %v; want one per roll", offs)
	}
	for _, off := range offs {
		if err := os.WriteFile(snapshotFile(dir, off), []byte("not a snapshot"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	for _, p := range ps[len(ps)-5:] {
		mustDuplicate(t, l, p.b, p.first, p.last)
	}
	mustRefuse(t, l, ps[0].b, segment.ErrOutOfOrderSequence)
}

// Kafka: removeStraySnapshots. A snapshot that is not at a segment base
// is deleted at Open, except the largest one past every base (the one
// Close writes at the log end); snapshots past the log end are deleted
// too (truncateAndReload).
func TestStrayProducerSnapshotsAreRemoved(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	ps := produceSeq(t, l, idem{pid: 7, seq: 0, n: 1}, 3)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	produceSeq(t, l, ps[2].b.next(1), 2)
	end := l.EndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	valid, err := os.ReadFile(snapshotFile(dir, end))
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{1, end + 10} { // not a base; past the log end
		if err := os.WriteFile(snapshotFile(dir, off), valid, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	got := fmt.Sprint(snapshotOffsets(t, dir))
	if want := fmt.Sprint([]int64{ps[2].last + 1, end}); got != want {
		t.Fatalf("snapshots %s, want %s", got, want)
	}
}
