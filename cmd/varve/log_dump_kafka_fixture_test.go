package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/varve/varve/segment"
)

// kafkaFixtures holds a log dir an Apache Kafka 4.4.0 broker left at a
// clean shutdown; kafkaFixtureInput is what its producers sent
// (internal/kafkafixtures/README.md says how).
const (
	kafkaFixtures     = "../../internal/kafkafixtures/testdata/kafka-4.4.0"
	kafkaFixtureInput = "../../internal/kafkafixtures/input.txt"
)

// dumpKafkaFixtures runs varve log dump --print-records on a copy of the
// fixture log dir and returns each file's section of the output by path,
// and the paths of every file in the copy.
func dumpKafkaFixtures(t *testing.T) (sections map[string]string, files []string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(kafkaFixtures)); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := runDump(t, "--print-records", dir)
	if strings.Contains(out, "Ignoring unknown file") {
		t.Errorf("a file Kafka wrote was not known:\n%s", out)
	}
	sections = map[string]string{}
	var cur string
	for _, line := range strings.SplitAfter(out, "\n") {
		if p, ok := strings.CutPrefix(line, "Dumping "); ok {
			cur = strings.TrimSuffix(p, "\n")
			continue
		}
		sections[cur] += line
	}
	return sections, files
}

// Kafka: DumpLogSegments over every file a 4.4.0 broker wrote (segments,
// trimmed indexes, producer snapshots, the checkpoints, partition.metadata,
// meta.properties, quorum-state, the clean-shutdown marker): varve log dump
// knows each, finds nothing wrong in any, and prints every record the
// producers sent, in valid batches.
func TestDumpFilesKafkaWrote(t *testing.T) {
	sections, files := dumpKafkaFixtures(t)
	var all strings.Builder
	for _, f := range files {
		body, ok := sections[f]
		if !ok {
			t.Errorf("%s not dumped", f)
			continue
		}
		if filepath.Base(f) == segment.CleanerOffsetCheckpointFile {
			continue // TestDumpEmptyCleanerCheckpointKafkaWrote
		}
		for _, bad := range []string{"corrupt", "invalid", "Mismatch", "isvalid: false", "unknown", "rror"} {
			if strings.Contains(body, bad) {
				t.Errorf("dump of %s reports %q:\n%s", f, bad, body)
			}
		}
		all.WriteString(body)
	}
	out := all.String()
	sent := readSent(t)
	for _, kv := range sent {
		if want := fmt.Sprintf("key: %q payload: %q", kv[0], kv[1]); !strings.Contains(out, want) {
			t.Errorf("dump lacks the record %s", want)
		}
	}
	if got, want := strings.Count(out, "| offset: "), len(sent); got != want {
		t.Errorf("dump prints %d records, the producers sent %d", got, want)
	}
	if got := strings.Count(out, "isvalid: true"); got != 7 { // 3 batches in fixture-0, 4 in fixture-1
		t.Errorf("dump prints %d valid batches, want 7", got)
	}
	for _, want := range []string{
		"cluster.id: dmFydmUta2Fma2EtZml4MQ\n",
		"leaderId: 1 leaderEpoch: 2 ",
		"version: 0 topicId: URjXs_rjRYacNb0H9_9Kmg\n",
		"epoch: 2 startOffset: 8\n",
		"topic: fixture partition: 1 offset: 12\n",
		"producerId: 1000 producerEpoch: 0 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dump lacks %q", want)
		}
	}
}

// Kafka: CheckpointReadBuffer.read takes a file with no first line for a
// checkpoint with no entries; 4.4.0 leaves cleaner-offset-checkpoint empty
// when no log was ever cleaned.
func TestDumpEmptyCleanerCheckpointKafkaWrote(t *testing.T) {
	sections, _ := dumpKafkaFixtures(t)
	for path, body := range sections {
		if filepath.Base(path) == segment.CleanerOffsetCheckpointFile && body != "version: 0 entries: 0\n" {
			t.Errorf("dump of Kafka's empty %s: %q, want no entries", path, body)
		}
	}
}

// readSent returns the key and value of each record in kafkaFixtureInput
// ("round key:value" lines).
func readSent(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open(kafkaFixtureInput)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, kv, _ := strings.Cut(sc.Text(), " ")
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			t.Fatalf("bad input line %q", sc.Text())
		}
		out = append(out, [2]string{k, v})
	}
	return out
}

// dumpOneKafkaFile dumps one file of the fixtures (rel, under
// internal/kafkafixtures/testdata), copied with its directory's name
// into a temporary directory, and returns what follows its "Dumping"
// line.
func dumpOneKafkaFile(t *testing.T, rel string, args ...string) string {
	t.Helper()
	src := filepath.Join(kafkaFixtures, "..", rel)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(src)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runDump(t, append(args, dst)...)
	_, body, ok := strings.Cut(out, "Dumping "+dst+"\n")
	if !ok {
		t.Fatalf("no section for %s:\n%s", dst, out)
	}
	return body
}

// Kafka: DumpLogSegments prints each kind of file a 4.4.0 broker writes,
// one subtest per kind, each on a file Kafka wrote
// (internal/kafkafixtures): what it prints is what Kafka's tool prints
// for the same file, field for field (a time index's entry, a producer
// snapshot's entries, a transaction index's aborted transaction, ...).
func TestDumpEachFileKindKafkaWrote(t *testing.T) {
	for _, tc := range []struct {
		kind, rel string
		args      []string
		want      []string // lines the section holds, in order
	}{
		{kind: "log", rel: "kafka-4.4.0/fixture-0/00000000000000000002.log", args: []string{"--print-records"}, want: []string{
			"Log starting offset: 2",
			"baseOffset: 2 lastOffset: 3 count: 2 baseSequence: 0 lastSequence: 1 producerId: 1000 producerEpoch: 0 partitionLeaderEpoch: 2 isTransactional: false isControl: false deleteHorizonMs: none baseTimestamp: 1796143368305 position: 0 CreateTime: 1796143368312 size: 107 magic: 2 compresscodec: none crc: 4025708895 isvalid: true",
			`| offset: 2 CreateTime: 1796143368305 keySize: 2 valueSize: 14 sequence: 0 headerKeys: [] key: "k3" payload: "round3-value11"`,
			`| offset: 3 CreateTime: 1796143368312 keySize: 2 valueSize: 14 sequence: 1 headerKeys: [] key: "k3" payload: "round3-value15"`}},
		{kind: "log with transaction markers", rel: "kafka-4.4.0-txn/txnfixture-0/00000000000000000000.log", args: []string{"--print-records"}, want: []string{
			`| offset: 6 CreateTime: 1796171724959 keySize: 2 valueSize: 14 sequence: 2 headerKeys: [] key: "k2" payload: "txn1-aborted-2"`,
			"baseOffset: 7 lastOffset: 7 count: 1 baseSequence: -1 lastSequence: -1 producerId: 0 producerEpoch: 2 partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: none baseTimestamp: 1796171725014 position: 588 CreateTime: 1796171725014 size: 78 magic: 2 compresscodec: none crc: 3929096302 isvalid: true",
			"| offset: 7 CreateTime: 1796171725014 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 0"}},
		{kind: "index", rel: "kafka-4.4.0-txn/txnfixture-0/00000000000000000000.index", want: []string{
			"offset: 14 position: 5146"}},
		{kind: "empty index", rel: "kafka-4.4.0/fixture-0/00000000000000000002.index", want: []string{"is empty."}},
		{kind: "timeindex", rel: "kafka-4.4.0-txn/txnfixture-0/00000000000000000000.timeindex", want: []string{
			"timestamp: 1796171725117 offset: 14", "timestamp: 1796171725260 offset: 15"}},
		{kind: "snapshot", rel: "kafka-4.4.0/fixture-0/00000000000000000004.snapshot", want: []string{
			"entries: 3",
			"producerId: 1000 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: -1 lastTimestamp: 1796143368312 firstSequence: 0 lastSequence: 1 lastOffset: 3 offsetDelta: 1 timestamp: 1796143368312"}},
		{kind: "snapshot of a transactional producer", rel: "kafka-4.4.0-txn/txnfixture-0/00000000000000000016.snapshot", want: []string{
			"entries: 1",
			"producerId: 0 producerEpoch: 4 coordinatorEpoch: 0 currentTxnFirstOffset: -1 lastTimestamp: 1796171725260"}},
		{kind: "txnindex", rel: "kafka-4.4.0-txn/txnfixture-0/00000000000000000000.txnindex", want: []string{
			"version: 0 producerId: 0 firstOffset: 4 lastOffset: 7 lastStableOffset: 8"}},
		{kind: "partition.metadata", rel: "kafka-4.4.0/fixture-0/partition.metadata", want: []string{
			"version: 0 topicId: URjXs_rjRYacNb0H9_9Kmg"}},
		{kind: "leader-epoch-checkpoint", rel: "kafka-4.4.0/fixture-1/leader-epoch-checkpoint", want: []string{
			"version: 0 entries: 2", "epoch: 0 startOffset: 0", "epoch: 2 startOffset: 8"}},
		{kind: "offset checkpoint", rel: "kafka-4.4.0/recovery-point-offset-checkpoint", want: []string{
			"version: 0 entries: 2", "topic: fixture partition: 0 offset: 4", "topic: fixture partition: 1 offset: 12"}},
		{kind: "meta.properties", rel: "kafka-4.4.0/meta.properties", want: []string{
			"cluster.id: dmFydmUta2Fma2EtZml4MQ", "directory.id: dFC8LORwihWkFEd_z6bCig", "node.id: 1", "version: 1"}},
		{kind: "quorum-state", rel: "kafka-4.4.0/__cluster_metadata-0/quorum-state", want: []string{
			`data_version: 0 clusterId: "" leaderId: 1 leaderEpoch: 2 votedId: -1 appliedOffset: 0 currentVoters: [1]`}},
		{kind: "clean-shutdown marker", rel: "kafka-4.4.0/.kafka_cleanshutdown", want: []string{
			`clean shutdown marker: {"version":0,"brokerEpoch":43}`}},
		{kind: "metadata log", rel: "kafka-4.4.0-metadata/__cluster_metadata-0/00000000000000000000.log", want: []string{
			"Log starting offset: 0", "payload: FeatureLevelRecord {Name:metadata.version FeatureLevel:33}",
			// Kafka's controller registers itself; Varve's image has no
			// use for the record, and names it rather than calling it
			// "not a metadata record".
			"| offset: 10 ", "payload: RegisterControllerRecord (api key 27, version 0): fields not decoded by Varve"}},
		{kind: "metadata snapshot", rel: "kafka-4.4.0-metadata/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint", want: []string{
			"Snapshot end offset: 0, epoch: 0",
			`SnapshotHeader {"version":0,"lastContainedLogTimestamp":1796147770500}`,
			"payload: FeatureLevelRecord {Name:metadata.version FeatureLevel:33}",
			"payload: FeatureLevelRecord {Name:transaction.version FeatureLevel:2}",
			`SnapshotFooter {"version":0}`}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			body := dumpOneKafkaFile(t, tc.rel, tc.args...)
			rest := body
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("dump lacks %q (in this order):\n%s", w, body)
				}
				rest = rest[i+len(w):]
			}
			for _, bad := range []string{"Ignoring unknown file", "corrupt", "invalid", "Mismatch", "rror", "not a metadata record"} {
				if strings.Contains(body, bad) {
					t.Errorf("dump reports %q:\n%s", bad, body)
				}
			}
		})
	}
}
