package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/varve/varve/record"
)

// kafkaMetadataDir is the metadata log a Kafka 4.4.0 node (broker and
// controller) wrote: see internal/kafkafixtures/README.md.
const kafkaMetadataDir = "../internal/kafkafixtures/testdata/kafka-4.4.0-metadata/__cluster_metadata-0"

// Api keys of Kafka's records that this package does not read, which a
// Kafka 4.4 log holds: NoOpRecord (20, the active controller's
// heartbeat through the log), BeginTransactionRecord and
// EndTransactionRecord (23, 24: KIP-868 metadata transactions, around
// the bootstrap records), RegisterControllerRecord (27, KIP-919).
var kafkaUnmodelled = map[uint32]string{27: "RegisterControllerRecord"}

// kafkaRecord is one record of the metadata log's data batches.
type kafkaRecord struct {
	offset int64
	value  []byte
}

// readKafkaMetadata returns the values of the data records of a
// metadata log segment or snapshot file; control records (leader
// changes, snapshot header and footer, voters) are not metadata records.
func readKafkaMetadata(t *testing.T, name string) []kafkaRecord {
	t.Helper()
	buf, err := os.ReadFile(filepath.Join(kafkaMetadataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []kafkaRecord
	for pos := 0; pos < len(buf); {
		h, size, err := record.NextBatch(buf[pos:], 0)
		if err != nil {
			t.Fatalf("%s at byte %d: %v", name, pos, err)
		}
		recs, err := record.DecodeBatch(buf[pos:pos+size], nil)
		if err != nil {
			t.Fatalf("%s at byte %d: %v", name, pos, err)
		}
		for _, r := range recs {
			if !h.IsControl() {
				out = append(out, kafkaRecord{r.Offset, bytes.Clone(r.Value)})
			}
		}
		pos += size
	}
	return out
}

// decodeKafkaMetadata decodes every record: one this package reads, or
// one of kafkaUnmodelled, refused as unsupported; anything else fails.
// It returns the records read and how many of each type there were.
func decodeKafkaMetadata(t *testing.T, name string) ([]Record, map[string]int) {
	t.Helper()
	var recs []Record
	counts := map[string]int{}
	for _, kr := range readKafkaMetadata(t, name) {
		rec, err := DecodeRecord(kr.value)
		if errors.Is(err, ErrUnsupportedRecord) && kafkaUnmodelled[uint32(kr.value[1])] != "" {
			counts[kafkaUnmodelled[uint32(kr.value[1])]]++
			continue
		}
		if err != nil {
			t.Fatalf("%s offset %d: %v (%x)", name, kr.offset, err, kr.value)
		}
		counts[fmt.Sprintf("%T", rec)]++
		recs = append(recs, rec)
		checkKafkaBytes(t, kr, rec)
	}
	return recs, counts
}

// checkKafkaBytes: a record of which Varve drops nothing is written
// back byte for byte as Kafka wrote it. RegisterBrokerRecord (Features,
// LogDirs), PartitionRecord (Directories, ELR), PartitionChangeRecord
// (ELR) and BrokerRegistrationChangeRecord v2+ (LogDirs) hold fields
// Varve drops.
func checkKafkaBytes(t *testing.T, kr kafkaRecord, rec Record) {
	t.Helper()
	switch rec.(type) {
	case RegisterBrokerRecord, PartitionRecord, PartitionChangeRecord:
		return
	case BrokerRegistrationChangeRecord:
		if kr.value[2] >= 2 {
			return
		}
	}
	if got := AppendRecord(nil, rec); !bytes.Equal(got, kr.value) {
		t.Errorf("offset %d %T written as\n%x\nKafka wrote\n%x", kr.offset, rec, got, kr.value)
	}
}

// Kafka: MetadataRecordSerde. Every record of a metadata log Kafka
// 4.4.0 wrote decodes, and replaying it gives the state Kafka's node
// was left in: broker 1 (registered twice: a restart) fenced and in
// controlled shutdown (KIP-841) after its clean shutdown, topic fixture
// with no leader at leader epoch 3 (elected at 0, then -1, 1, -1 across
// the two shutdowns), its segment.ms override and the second producer-id
// block.
func TestDecodeKafkaMetadataLog(t *testing.T) {
	recs, counts := decodeKafkaMetadata(t, "00000000000000000000.log")
	want := map[string]int{
		"metadata.FeatureLevelRecord":             6,
		"metadata.ConfigRecord":                   2,
		"metadata.RegisterBrokerRecord":           2,
		"metadata.BrokerRegistrationChangeRecord": 8,
		"metadata.TopicRecord":                    1,
		"metadata.PartitionRecord":                2,
		"metadata.PartitionChangeRecord":          6,
		"metadata.ProducerIdsRecord":              2,
		"metadata.BeginTransactionRecord":         1,
		"metadata.EndTransactionRecord":           1,
		"RegisterControllerRecord":                2,
	}
	noops := counts["metadata.NoOpRecord"]
	delete(counts, "metadata.NoOpRecord")
	if d := cmp.Diff(want, counts); d != "" || noops == 0 {
		t.Fatalf("records by type (-want +got):\n%s\nNoOpRecords: %d", d, noops)
	}

	// Apply keeps topic configs only: the cluster-wide default the
	// formatter writes (min.insync.replicas, resource type broker, name
	// "") is not part of the image.
	var topicRecs []Record
	for _, r := range recs {
		if c, ok := r.(ConfigRecord); ok && c.ResourceType == ConfigResourceBroker {
			if c.ResourceName != "" || c.Name != "min.insync.replicas" {
				t.Fatalf("unexpected broker config %+v", c)
			}
			continue
		}
		topicRecs = append(topicRecs, r)
	}
	img, err := Apply(New("dmFydmUta2Fma2EtZml4MQ"), topicRecs...)
	if err != nil {
		t.Fatalf("Apply(Kafka's records): %v", err)
	}
	const wantImage = `cluster dmFydmUta2Fma2EtZml4MQ version 28
broker 1 epoch=45 rack="" fenced=true endpoints=[{PLAINTEXT 127.0.0.1 60027 PLAINTEXT}] in-controlled-shutdown
topic fixture id=50d005808c4a4d31ac0c9d9744fede26 segment.ms=1000
  0: leader=-1 leader-epoch=3 partition-epoch=3 replicas=[1] isr=[]
  1: leader=-1 leader-epoch=3 partition-epoch=3 replicas=[1] isr=[]
feature eligible.leader.replicas.version=1
feature group.version=1
feature metadata.version=33
feature share.version=2
feature streams.version=1
feature transaction.version=2
producer-ids broker=1 next=2000
`
	if d := cmp.Diff(wantImage, describe(img)); d != "" {
		t.Fatalf("image of Kafka's log (-want +got):\n%s", d)
	}

	// And its snapshot rebuilds it.
	again, err := Apply(New(img.ClusterID()), SnapshotRecords(img)...)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(img, again, sameImage); d != "" {
		t.Fatalf("image rebuilt from its snapshot (-want +got):\n%s", d)
	}
}

// Kafka: the bootstrap snapshot (00000000000000000000-0000000000.checkpoint)
// the formatter writes holds the finalized features, metadata.version
// first, as a snapshot of Varve's begins.
func TestDecodeKafkaBootstrapSnapshot(t *testing.T) {
	recs, _ := decodeKafkaMetadata(t, "00000000000000000000-0000000000.checkpoint")
	levels := map[string]int16{}
	for i, r := range recs {
		f, ok := r.(FeatureLevelRecord)
		if !ok {
			t.Fatalf("record %d: %T, want FeatureLevelRecord", i, r)
		}
		if i == 0 && f.Name != metadataVersionFeature {
			t.Fatalf("first record %+v, want metadata.version", f)
		}
		levels[f.Name] = f.FeatureLevel
	}
	want := map[string]int16{"metadata.version": 33, "eligible.leader.replicas.version": 1, "group.version": 1,
		"share.version": 2, "streams.version": 1, "transaction.version": 2}
	if d := cmp.Diff(want, levels); d != "" {
		t.Fatalf("bootstrap features (-want +got):\n%s\n%v", d, slices.Sorted(maps.Keys(levels)))
	}
}
