package segment_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// kafkaPartition is what the fixture's producers left in one partition.
type kafkaPartition struct {
	name  string
	keys  []string // the keys Kafka's partitioner (murmur2) sent here
	bases []int64  // segment base offsets: one segment per produce round
}

var kafkaPartitions = []kafkaPartition{
	{"fixture-0", []string{"k3"}, []int64{0, 1, 2}},
	{"fixture-1", []string{"k0", "k1", "k2"}, []int64{0, 5, 8}},
}

// kafkaRounds maps a produce round to its producer id (Kafka's controller
// hands out ids in blocks of 1000; the restart before round 3 took a new
// block) and the leader epoch its batches carry (the restart moved the
// leader to none, epoch 1, and back, epoch 2).
var kafkaRounds = map[int]struct {
	producerID int64
	epoch      int32
}{1: {0, 0}, 2: {1, 0}, 3: {1000, 2}}

// kafkaFixtureNow is a minute after the fixture's last batch, so that
// producer expiry (producer.id.expiration.ms, one day) keeps every
// producer whatever day the test runs.
var kafkaFixtureNow = time.UnixMilli(1796143368312).Add(time.Minute)

// copyKafkaPartition copies a fixture partition directory into a fresh
// log dir, since Open writes (snapshots, checkpoints).
func copyKafkaPartition(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(kafkaFixtures, name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Kafka: UnifiedLog/LogLoader on a partition directory a 4.4.0 broker
// left at a clean shutdown (empty trimmed .index files, one .timeindex
// entry per segment, producer snapshots at each roll and at the end).
// Opened as the log manager does after a clean shutdown, and as after a
// crash (no marker: every batch is validated), nothing is dropped, every
// record comes back with the offset, key, value, leader epoch, producer
// id and sequence the producers gave it, and the producer state is
// Kafka's snapshot's.
func TestOpenPartitionKafkaWrote(t *testing.T) {
	sent := readKafkaInput(t)
	recoveryPoints, err := segment.ReadCheckpoint(nil, filepath.Join(kafkaFixtures, segment.RecoveryPointCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range kafkaPartitions {
		want := sentTo(sent, p.keys)
		rp := recoveryPoints[segment.ParseTopicPartition(p.name)]
		for mode, managed := range map[string]*segment.ManagedState{
			"clean":   {CleanShutdown: true, RecoveryPoint: rp, LogStartOffset: -1},
			"unclean": nil,
		} {
			t.Run(p.name+"/"+mode, func(t *testing.T) {
				cfg := segment.DefaultConfig()
				cfg.Managed, cfg.Now = managed, func() time.Time { return kafkaFixtureNow }
				l, err := segment.Open(copyKafkaPartition(t, p.name), cfg)
				if err != nil {
					t.Fatalf("open Kafka's partition: %v", err)
				}
				defer l.Close()
				checkKafkaRecovery(t, l, managed != nil, int64(len(want)), p.bases)
				checkKafkaOffsetsForTime(t, l, checkKafkaRecords(t, l, want))
				checkKafkaProducers(t, l.Producers(), want)
			})
		}
	}
}

// sentTo is the input records with one of keys, in the order sent.
func sentTo(sent []sentRecord, keys []string) []sentRecord {
	var out []sentRecord
	for _, r := range sent {
		if slices.Contains(keys, r.key) {
			out = append(out, r)
		}
	}
	return out
}

func checkKafkaRecovery(t *testing.T, l *segment.Log, clean bool, end int64, bases []int64) {
	t.Helper()
	rep := l.Recovery()
	if rep.Dropped() || rep.LostOffsets() != 0 || rep.TruncatedAt != -1 {
		t.Errorf("recovery changed Kafka's log: %+v", rep)
	}
	// Kafka rebuilds the indexes of the segments it validates
	// (LogSegment.recover); after a clean shutdown it keeps them.
	if clean && rep.IndexesRebuilt != 0 {
		t.Errorf("Kafka's indexes rebuilt after a clean shutdown: %+v", rep)
	}
	if rep.CleanShutdown != clean || (!clean && rep.SegmentsRecovered != len(bases)) {
		t.Errorf("recovery: clean %t, %d segments validated; want clean %t", rep.CleanShutdown, rep.SegmentsRecovered, clean)
	}
	if l.StartOffset() != 0 || l.EndOffset() != end {
		t.Errorf("offsets [%d, %d), want [0, %d)", l.StartOffset(), l.EndOffset(), end)
	}
	var got []int64
	for _, s := range l.Segments() {
		got = append(got, s.BaseOffset)
	}
	if !slices.Equal(got, bases) {
		t.Errorf("segments %v, want %v", got, bases)
	}
}

// checkKafkaRecords reads the whole log through Log.ReadBytes and
// record.Records, compares it with what was sent and returns each
// record's timestamp, by offset.
func checkKafkaRecords(t *testing.T, l *segment.Log, want []sentRecord) []int64 {
	t.Helper()
	var i int
	var stamps []int64
	for off := l.StartOffset(); off < l.EndOffset(); {
		buf, err := l.ReadBytes(off, 1<<20)
		if err != nil || len(buf) == 0 {
			t.Fatalf("read at %d: %d bytes, %v", off, len(buf), err)
		}
		checkKafkaBatches(t, buf, want)
		for r, err := range record.Records(buf) {
			if err != nil {
				t.Fatalf("records at %d: %v", off, err)
			}
			if i >= len(want) {
				t.Fatalf("record at offset %d past the %d sent", r.Offset, len(want))
			}
			if w := want[i]; r.Offset != int64(i) || string(r.Key) != w.key || string(r.Value) != w.value {
				t.Errorf("record %d: offset %d %s=%s, want offset %d %s=%s", i, r.Offset, r.Key, r.Value, i, w.key, w.value)
			}
			i++
			off = r.Offset + 1
			stamps = append(stamps, r.Timestamp)
		}
	}
	if i != len(want) {
		t.Errorf("read %d records, sent %d", i, len(want))
	}
	return stamps
}

// Kafka: ListOffsets by timestamp (KIP-33) answers the first offset whose
// timestamp is at least the target, searching from Kafka's .timeindex
// entries (one per segment here, at its largest timestamp).
func checkKafkaOffsetsForTime(t *testing.T, l *segment.Log, stamps []int64) {
	t.Helper()
	for _, ts := range stamps {
		for _, target := range []int64{ts - 1, ts, ts + 1} {
			want := int64(slices.IndexFunc(stamps, func(s int64) bool { return s >= target }))
			off, _, found, err := l.OffsetForTime(target)
			if err != nil || found != (want >= 0) || (found && off != want) {
				t.Errorf("OffsetForTime(%d): %d, found %t, %v; want %d", target, off, found, err, want)
			}
		}
	}
}

// checkKafkaBatches checks each batch's producer id, leader epoch and
// sequences: a round's records here carry sequences 0, 1, ... in order.
func checkKafkaBatches(t *testing.T, buf []byte, want []sentRecord) {
	t.Helper()
	for pos := 0; pos < len(buf); {
		h, size, err := record.NextBatch(buf[pos:], 0)
		if err != nil {
			t.Fatalf("batch at %d: %v", pos, err)
		}
		pos += size
		w := want[h.BaseOffset]
		r := kafkaRounds[w.round]
		seq := int32(h.BaseOffset - firstOfRound(want, w.round))
		if h.ProducerID != r.producerID || h.ProducerEpoch != 0 || h.PartitionLeaderEpoch != r.epoch || h.BaseSequence != seq {
			t.Errorf("batch at offset %d: producer %d/%d epoch %d sequence %d, want producer %d/0 epoch %d sequence %d",
				h.BaseOffset, h.ProducerID, h.ProducerEpoch, h.PartitionLeaderEpoch, h.BaseSequence, r.producerID, r.epoch, seq)
		}
	}
}

func firstOfRound(want []sentRecord, round int) int64 {
	return int64(slices.IndexFunc(want, func(r sentRecord) bool { return r.round == round }))
}

// checkKafkaProducers checks the producer state against the sent
// records: per round's producer, its last sequence and last offset here.
func checkKafkaProducers(t *testing.T, got []segment.ProducerState, want []sentRecord) {
	t.Helper()
	type summary struct {
		ID                    int64
		Epoch                 int16
		LastSequence          int32
		LastOffset            int64
		CoordinatorEpoch      int32
		CurrentTxnFirstOffset int64
	}
	wants := map[int64]summary{}
	for off, r := range want {
		id := kafkaRounds[r.round].producerID
		wants[id] = summary{id, 0, int32(int64(off) - firstOfRound(want, r.round)), int64(off), -1, -1}
	}
	gots := map[int64]summary{}
	for _, p := range got {
		gots[p.ProducerID] = summary{p.ProducerID, p.Epoch, p.LastSequence, p.LastOffset, p.CoordinatorEpoch, p.CurrentTxnFirstOffset}
	}
	if diff := cmp.Diff(wants, gots); diff != "" {
		t.Errorf("producers (-want +got):\n%s", diff)
	}
}

// Kafka: ProducerStateManager's snapshot file (version 1, CRC-32C), as a
// 4.4.0 broker wrote it at its clean shutdown: one entry per producer,
// with its last batch.
func TestReadProducerSnapshotKafkaWrote(t *testing.T) {
	sent := readKafkaInput(t)
	for _, p := range kafkaPartitions {
		want := sentTo(sent, p.keys)
		path := filepath.Join(kafkaFixtures, p.name, segment.FilenamePrefix(int64(len(want)))+".snapshot")
		got, err := segment.ReadProducerSnapshot(nil, path)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		checkKafkaProducers(t, got, want)
	}
}
