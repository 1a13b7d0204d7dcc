package migrate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/record"
)

var (
	topicID   = metadata.TopicID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	clusterID = "dmFydmUtbWlncmF0ZS10ZQ"
)

func strp(s string) *string { return &s }

// baseRecords are a node's metadata: topic "compacted" with one
// partition on node 1, compacted, a producer-id block and a cluster
// default broker config.
func baseRecords() []any {
	return []any{
		metadata.FeatureLevelRecord{Name: metadata.MetadataVersionFeature, FeatureLevel: 27},
		metadata.ConfigRecord{ResourceType: metadata.ConfigResourceBroker, Name: "min.insync.replicas", Value: strp("1")},
		metadata.TopicRecord{Name: "compacted", TopicID: topicID},
		metadata.PartitionRecord{TopicID: topicID, PartitionID: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
		metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: "compacted", Name: "cleanup.policy", Value: strp("compact")},
		metadata.ProducerIdsRecord{BrokerID: 1, NextProducerID: 5000},
	}
}

// rawRecord is a record package metadata does not model: frame version,
// api key, version 0, a null name and no tagged fields.
type rawRecord uint64

// kafkaLogDir makes a Kafka log dir of node 1: meta.properties, one
// batch per element of batches in __cluster_metadata-0's first segment
// (each element a metadata.Record or a rawRecord), and a directory for
// partition compacted-0 with its partition.metadata.
func kafkaLogDir(t *testing.T, batches ...[]any) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, logdir.MetaPropertiesFile), fmt.Sprintf("#\ncluster.id=%s\nnode.id=1\nversion=1\n", clusterID))
	partitionDir(t, dir, "compacted-0", topicID)
	writeMetadataLog(t, filepath.Join(dir, MetadataLogDir, "00000000000000000000.log"), 0, batches...)
	return dir
}

func partitionDir(t *testing.T, dir, name string, id metadata.TopicID) {
	t.Helper()
	write(t, filepath.Join(dir, name, "partition.metadata"), "version: 0\ntopic_id: "+logdir.TopicID(id).String())
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeMetadataLog writes batches as Kafka's controller does, from
// offset base on.
func writeMetadataLog(t *testing.T, path string, base int64, batches ...[]any) {
	t.Helper()
	var out []byte
	for _, recs := range batches {
		b := record.NewBatchBuilder(record.CompressionNone)
		for _, r := range recs {
			var v []byte
			switch r := r.(type) {
			case rawRecord:
				v = []byte{1, byte(r), 0, 0, 0}
			case metadata.Record:
				v = metadata.AppendRecord(nil, r)
			}
			b.Append(record.Record{Value: v})
		}
		batch, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint64(batch[0:8], uint64(base))
		base += int64(len(recs))
		out = append(out, batch...)
	}
	write(t, path, string(out))
}

// Kafka: topic ids, topic configs (a compacted topic stays compacted)
// and the producer-id block live in the KRaft metadata log; the plan
// carries them, and the cluster-default broker config Kafka's format
// wrote (KIP-966's min.insync.replicas), and leaves the features Kafka
// finalized to the node.
func TestPlanCarriesKafkaMetadata(t *testing.T) {
	dir := kafkaLogDir(t, baseRecords())
	p, err := Build(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Refusals) > 0 {
		t.Fatalf("refused: %v", p.Refusals)
	}
	tp, ok := p.Image.Topic("compacted")
	if !ok || tp.ID != topicID || len(tp.Partitions) != 1 || tp.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("topic compacted: %+v", tp)
	}
	if p.ClusterID != clusterID || p.NodeID != 1 || p.Image.ProducerIDs().NextProducerID != 5000 {
		t.Errorf("cluster %s node %d producer ids %d", p.ClusterID, p.NodeID, p.Image.ProducerIDs().NextProducerID)
	}
	if got := p.Image.FeatureLevel(metadata.MetadataVersionFeature); got != metadata.LatestMetadataVersion {
		t.Errorf("metadata.version %d, want Varve's latest %d", got, metadata.LatestMetadataVersion)
	}
	if p.Image.BrokerConfigs("")["min.insync.replicas"] != "1" || len(p.BrokerConfigs) != 0 {
		t.Errorf("broker configs carried %v, left behind %v", p.Image.BrokerConfigs(""), p.BrokerConfigs)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, cluster.MetadataFile)); err != nil {
		t.Fatal(err)
	}
}

// Kafka: KIP-226 dynamic broker configs and KIP-13/55 client quotas
// live in the metadata log. The plan carries the cluster default's and
// this node's settings that Varve applies live, and the client quotas;
// a setting Varve takes only at start-up, and another node's, are left
// behind and printed, never dropped in silence.
func TestPlanCarriesBrokerConfigsAndQuotas(t *testing.T) {
	broker := func(name, k, v string) metadata.ConfigRecord {
		return metadata.ConfigRecord{ResourceType: metadata.ConfigResourceBroker, ResourceName: name, Name: k, Value: strp(v)}
	}
	dir := kafkaLogDir(t, baseRecords(), []any{
		broker("", "log.retention.ms", "3600000"),
		broker("1", "log.cleaner.threads", "2"),
		broker("1", "num.replica.fetchers", "4"),
		broker("2", "log.retention.ms", "60000"),
		metadata.ClientQuotaRecord{Entity: []metadata.QuotaEntityData{{Type: "client-id", Name: ptr("app")}}, Key: "producer_byte_rate", Value: 1048576},
	})
	p, err := Build(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Refusals) > 0 {
		t.Fatalf("refused: %v", p.Refusals)
	}
	if got := p.Image.BrokerConfigs(""); got["log.retention.ms"] != "3600000" || got["min.insync.replicas"] != "1" {
		t.Errorf("cluster default carried: %v", got)
	}
	if got := p.Image.BrokerConfigs("1"); len(got) != 1 || got["log.cleaner.threads"] != "2" {
		t.Errorf("node 1 carried: %v", got)
	}
	if got := p.Image.BrokerConfigs("2"); got != nil {
		t.Errorf("node 2's settings carried onto this node's image: %v", got)
	}
	want := map[string]map[string]string{"1": {"num.replica.fetchers": "4"}, "2": {"log.retention.ms": "60000"}}
	if fmt.Sprint(p.BrokerConfigs) != fmt.Sprint(want) {
		t.Errorf("left behind %v, want %v", p.BrokerConfigs, want)
	}
	if q := p.Image.ClientQuotas(metadata.QuotaEntity{ClientID: metadata.Named("app")}); q["producer_byte_rate"] != 1048576 {
		t.Errorf("client quota: %v", q)
	}
	var out strings.Builder
	p.Print(&out)
	for _, line := range []string{"broker 1) not carried over", "num.replica.fetchers=4", "broker 2) not carried over", "log.retention.ms=60000"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("the plan does not print %q:\n%s", line, out.String())
		}
	}
}

// Kafka: KIP-868 metadata transactions. Records between a
// BeginTransactionRecord and an AbortTransactionRecord never happened;
// those before an EndTransactionRecord apply together.
func TestPlanMetadataTransactions(t *testing.T) {
	aborted := metadata.TopicID{9}
	dir := kafkaLogDir(t,
		[]any{metadata.BeginTransactionRecord{}},
		baseRecords(),
		[]any{metadata.EndTransactionRecord{}},
		[]any{metadata.BeginTransactionRecord{}, metadata.TopicRecord{Name: "aborted", TopicID: aborted}},
		[]any{metadata.AbortTransactionRecord{}, metadata.NoOpRecord{}},
	)
	p, err := Build(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Refusals) > 0 {
		t.Fatalf("refused: %v", p.Refusals)
	}
	if _, ok := p.Image.Topic("compacted"); !ok {
		t.Error("the committed metadata transaction's topic is missing")
	}
	if _, ok := p.Image.Topic("aborted"); ok {
		t.Error("the aborted metadata transaction's topic is there")
	}
	if p.Ignored["NoOpRecord"] != 1 {
		t.Errorf("ignored %v", p.Ignored)
	}
}

// Kafka: a snapshot <end>-<epoch>.checkpoint holds the state of every
// record below end; the log's records from end on follow it (Kafka's
// MetadataLoader reads the newest snapshot, then the log after it).
func TestPlanReplaysSnapshotThenLog(t *testing.T) {
	base := baseRecords()
	dir := kafkaLogDir(t, base,
		[]any{metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: "compacted", Name: "min.cleanable.dirty.ratio", Value: strp("0.1")}},
	)
	// The snapshot at len(base) holds the state of the log's first
	// batch (replaying that batch again would create the topic twice);
	// the log's second batch follows it.
	writeMetadataLog(t, filepath.Join(dir, MetadataLogDir, fmt.Sprintf("%020d-%010d.checkpoint", len(base), 1)), 0, base)
	p, err := Build(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Refusals) > 0 {
		t.Fatalf("refused: %v", p.Refusals)
	}
	tp, _ := p.Image.Topic("compacted")
	if tp == nil || tp.Configs["min.cleanable.dirty.ratio"] != "0.1" || tp.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("topic compacted: %+v", tp)
	}
}

// Kafka: what a single Varve node cannot serve as Kafka did is refused,
// with a reason, and nothing is written.
func TestPlanRefuses(t *testing.T) {
	other := metadata.TopicID{42}
	cases := []struct {
		name  string
		extra []any
		setup func(t *testing.T, dir string)
		want  string
	}{
		{name: "replicas_on_other_nodes", want: "cluster migration",
			extra: []any{metadata.TopicRecord{Name: "spread", TopicID: other},
				metadata.PartitionRecord{TopicID: other, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1}},
			setup: func(t *testing.T, dir string) { partitionDir(t, dir, "spread-0", other) }},
		{name: "partition_missing", want: "missing from",
			extra: []any{metadata.TopicRecord{Name: "elsewhere", TopicID: other},
				metadata.PartitionRecord{TopicID: other, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}}},
		{name: "stray_partition", want: "no topic in Kafka's metadata",
			setup: func(t *testing.T, dir string) { partitionDir(t, dir, "stray-0", other) }},
		{name: "future_log", want: "no topic in Kafka's metadata",
			setup: func(t *testing.T, dir string) { partitionDir(t, dir, "compacted-0.abc-future", topicID) }},
		{name: "topic_id_mismatch", want: "partition.metadata names topic id",
			setup: func(t *testing.T, dir string) { partitionDir(t, dir, "compacted-0", other) }},
		{name: "unknown_record", want: "api key 99", extra: []any{rawRecord(99)}},
		{name: "already_varve", want: "already holds",
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, cluster.MetadataFile), "{}") }},
		{name: "kafka_running", want: "stop Kafka first", setup: holdLock},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := kafkaLogDir(t, append(baseRecords(), c.extra...))
			if c.setup != nil {
				c.setup(t, dir)
			}
			before := listing(t, dir)
			p, err := Build(dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(p.Refusals, "\n"), c.want) {
				t.Fatalf("refusals %q, want one saying %q", p.Refusals, c.want)
			}
			if err := p.Write(); !errors.Is(err, ErrRefused) {
				t.Fatalf("Write: %v, want ErrRefused", err)
			}
			if after := listing(t, dir); after != before {
				t.Errorf("files changed:\n%s\nto\n%s", before, after)
			}
		})
	}
}

// holdLock takes Kafka's lock on dir/.lock as a running Kafka does, with
// an open-file-description lock, which conflicts with the record lock
// Build asks about even from this process.
func holdLock(t *testing.T, dir string) {
	f, err := os.Create(filepath.Join(dir, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		t.Skipf("open file description locks: %v", err)
	}
}

// listing names every file under dir with its size.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %v\n", path, info.Size(), info.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Kafka: meta.properties in every log dir and the metadata dir names
// one cluster and node (MetaPropertiesEnsemble); a metadata log of
// another node describes other partitions.
func TestPlanRefusesMetadataDirOfAnotherNode(t *testing.T) {
	dir := kafkaLogDir(t, baseRecords())
	metaDir := t.TempDir()
	if err := os.Rename(filepath.Join(dir, MetadataLogDir), filepath.Join(metaDir, MetadataLogDir)); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(metaDir, logdir.MetaPropertiesFile), fmt.Sprintf("cluster.id=%s\nnode.id=2\nversion=1\n", clusterID))
	p, err := Build(dir, metaDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Refusals, "\n"), "node 2") {
		t.Fatalf("refusals %q, want one naming node 2", p.Refusals)
	}
	write(t, filepath.Join(metaDir, logdir.MetaPropertiesFile), fmt.Sprintf("cluster.id=%s\nnode.id=1\nversion=1\n", clusterID))
	if p, err = Build(dir, metaDir); err != nil || len(p.Refusals) > 0 {
		t.Fatalf("the node's own metadata dir: %v %q", err, p.Refusals)
	}
}

func ptr(s string) *string { return &s }
