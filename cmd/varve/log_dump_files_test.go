package main

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// writeManagedDir writes a log dir through the log manager, as the broker
// does: a partition with partition.metadata, two idempotent producers'
// batches over two segments (a producer snapshot at the roll and one at
// the clean shutdown) and the checkpoint files. It returns the log dir,
// the topic id and the offset of producer 9's last batch.
func writeManagedDir(t *testing.T) (string, logdir.TopicID, int64) {
	t.Helper()
	dir := t.TempDir()
	m, err := logdir.Open(logdir.Config{
		LogDirs: []string{dir}, RecoveryThreadsPerDataDir: 1,
		LogConfig:     func(string) segment.Config { return segment.DefaultConfig() },
		HighWatermark: func(segment.TopicPartition) (int64, bool) { return 0, false },
	})
	if err != nil {
		t.Fatal(err)
	}
	id := logdir.TopicID{0xde, 0xad, 0xbe, 0xef, 15: 1}
	pl, err := m.Create(segment.TopicPartition{Topic: "files", Partition: 0}, id)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for i, pid := range []int64{8, 9, 9} {
		b := record.NewBatchBuilder(record.CompressionNone)
		b.SetProducer(pid, 2, []int32{0, 0, 2}[i])
		b.Append(record.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: dumpTestTS + int64(i)})
		b.Append(record.Record{Key: []byte("k"), Value: []byte("w"), Timestamp: dumpTestTS + int64(i)})
		batch, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		info, err := pl.Log.Append(batch)
		if err != nil {
			t.Fatal(err)
		}
		last = info.LastOffset
		if i == 0 {
			if err := pl.Log.Roll(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, id, last
}

// Kafka's DumpLogSegments prints a producer snapshot one producer per
// line (dumpProducerIdSnapshot); varve log dump also prints
// partition.metadata and every checkpoint the log manager writes, files
// all written here by the code that writes them for the broker.
func TestDumpFilesTheLogManagerWrites(t *testing.T) {
	dir, id, last := writeManagedDir(t)
	out := runDump(t, dir)
	pdir := filepath.Join(dir, "files-0")
	for _, want := range []string{
		"Dumping " + filepath.Join(pdir, logdir.PartitionMetadataFile) + "\nversion: 0 topicId: " + id.String() + "\n",
		"Dumping " + filepath.Join(pdir, segment.FilenamePrefix(2)+".snapshot") + "\nentries: 1\n" +
			fmt.Sprintf("producerId: 8 producerEpoch: 2 coordinatorEpoch: -1 currentTxnFirstOffset: -1 lastTimestamp: %d firstSequence: 0 lastSequence: 1 lastOffset: 1 offsetDelta: 1 timestamp: %d\n", dumpTestTS, dumpTestTS),
		"Dumping " + filepath.Join(pdir, segment.FilenamePrefix(last+1)+".snapshot") + "\nentries: 2\n",
		fmt.Sprintf("producerId: 9 producerEpoch: 2 coordinatorEpoch: -1 currentTxnFirstOffset: -1 lastTimestamp: %d firstSequence: 2 lastSequence: 3 lastOffset: %d offsetDelta: 1 timestamp: %d\n", dumpTestTS+2, last, dumpTestTS+2),
		"Dumping " + filepath.Join(dir, segment.RecoveryPointCheckpointFile) + "\nversion: 0 entries: 1\ntopic: files partition: 0 offset: " + fmt.Sprint(last+1) + "\n",
		"Dumping " + filepath.Join(dir, segment.LogStartOffsetCheckpointFile) + "\nversion: 0 entries: 1\ntopic: files partition: 0 offset: 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dump lacks\n%s\ngot:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Ignoring unknown file") {
		t.Errorf("a file the log manager wrote was not known:\n%s", out)
	}
}

// Files Kafka 4.x writes that Varve does not (yet), made by hand in
// Kafka's formats: a .txnindex (TransactionIndex: 34-byte AbortedTxn
// entries), KRaft's quorum-state (QuorumStateData JSON, data_version 1),
// meta.properties (MetaProperties version 1) and a partition.metadata
// from Kafka (no newline after the id).
func TestDumpKafkasOtherFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var txn []byte
	for _, e := range [][4]int64{{1000, 5, 9, 5}, {1001, 12, 20, 12}} {
		txn = binary.BigEndian.AppendUint16(txn, 0)
		for _, v := range e {
			txn = binary.BigEndian.AppendUint64(txn, uint64(v))
		}
	}
	txnPath := write(segment.FilenamePrefix(0)+".txnindex", append(txn, 0, 0, 0)) // and a torn entry
	qs := write("quorum-state", []byte(`{"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","appliedOffset":0,"currentVoters":null,"data_version":1}`))
	mp := write("meta.properties", []byte("#\n#Tue Dec 01 12:00:00 UTC 2026\nnode.id=1\ndirectory.id=J8Ps5gK4Qc6mXv2bqz0Rbg\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n"))
	pm := write("partition.metadata", []byte("version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA"))
	want := map[string]string{
		txnPath: "version: 0 producerId: 1000 firstOffset: 5 lastOffset: 9 lastStableOffset: 5\n" +
			"version: 0 producerId: 1001 firstOffset: 12 lastOffset: 20 lastStableOffset: 12\n" +
			"Found 3 invalid bytes at the end of 00000000000000000000.txnindex: partial aborted transaction entry\n",
		qs: `data_version: 1 clusterId: "" leaderId: 1 leaderEpoch: 3 votedId: -1 votedDirectoryId: AAAAAAAAAAAAAAAAAAAAAA appliedOffset: 0` + "\n",
		mp: "cluster.id: MkU3OEVBNTcwNTJENDM2Qk\ndirectory.id: J8Ps5gK4Qc6mXv2bqz0Rbg\nnode.id: 1\nversion: 1\n",
		pm: "version: 0 topicId: AQIDBAUGBwgJCgsMDQ4PEA\n",
	}
	for path, body := range want {
		if got := runDump(t, path); got != "Dumping "+path+"\n"+body {
			t.Errorf("dump of %s:\n%s\nwant:\n%s", filepath.Base(path), got, "Dumping "+path+"\n"+body)
		}
	}
	if out := runDump(t, dir); strings.Contains(out, "Ignoring unknown file") {
		t.Errorf("a Kafka file was not known:\n%s", out)
	}
}

// Each reader reports a file that is not what Kafka writes instead of
// printing garbage or failing the dump.
func TestDumpReportsMalformedKafkaFiles(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ data, want string }{
		"quorum-state":                          {`{"leaderId":1,"data_version":7}`, "unknown data_version"},
		"meta.properties":                       {"version=1\nnode.id=1\n", "version 1 requires cluster.id, which is missing"},
		"partition.metadata":                    {"version: 1\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA", "unrecognized version line"},
		segment.FilenamePrefix(5) + ".snapshot": {"\x00\x01garbage", "corrupt"},
		segment.FilenamePrefix(5) + ".txnindex": {"\x00\x07" + strings.Repeat("\x00", 32), "unexpected aborted transaction version 7"},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := runDump(t, p); !strings.Contains(got, tc.want) {
			t.Errorf("%s: dump %q does not report %q", name, got, tc.want)
		}
	}
}

// Kafka: DumpLogSegments.dumpTxnIndex on a .txnindex the log wrote when
// a transaction aborted, with the directory dump listing it after its
// segment's time index.
func TestDumpTxnIndexWrittenByTheLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := segment.DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	l, err := segment.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(77, 1, 0)
	bb.SetTransactional(true)
	bb.Append(record.Record{Key: []byte("k"), Value: []byte("v")})
	bb.Append(record.Record{Key: []byte("k"), Value: []byte("v")})
	batch, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(batch); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendTxnMarker(segment.TxnMarker{ProducerID: 77, ProducerEpoch: 1, CoordinatorEpoch: 2}, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, segment.FilenamePrefix(0)+segment.TxnIndexSuffix)
	want := "Dumping " + path + "\nversion: 0 producerId: 77 firstOffset: 0 lastOffset: 2 lastStableOffset: 3\n"
	if got := runDump(t, path); got != want {
		t.Fatalf("dump:\n%s\nwant:\n%s", got, want)
	}
	out := runDump(t, dir)
	if i, j := strings.Index(out, "Dumping "+path), strings.Index(out, ".timeindex"); i < 0 || j < 0 || i < j {
		t.Fatalf("directory dump does not list the txnindex after the time index:\n%s", out)
	}
}
