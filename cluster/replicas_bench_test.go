package cluster_test

import (
	"fmt"
	"log/slog"
	"strconv"
	"testing"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
)

// BenchmarkApplyImage measures one image application by the replica
// manager (Kafka's ReplicaManager.applyDelta) on a broker that holds a
// replica of every partition, at 10, 1,000 and 10,000 partitions: each
// op publishes an image in which one partition's leader epoch moved (a
// PartitionChangeRecord naming this broker leader again) and applies
// it. The logs are real (one directory and active segment each), so a
// process cannot hold 100,000 of them under a 20,000 descriptor limit;
// the broker is not started, so nothing else runs.
//
//	go test -run '^$' -bench ApplyImage ./cluster
//
// change=config publishes a topic configuration change instead, which
// asks nothing of any replica: what is left is the walk over the image.
func BenchmarkApplyImage(b *testing.B) {
	for _, change := range []string{"leader", "config"} {
		for _, size := range []int{10, 1_000, 10_000} {
			b.Run(fmt.Sprintf("change=%s/partitions=%d", change, size), func(b *testing.B) { benchApplyImage(b, size, change) })
		}
	}
}

func benchApplyImage(b *testing.B, size int, change string) {
	cfg, err := config.Parse(map[string]string{"node.id": "1", "log.dirs": b.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0",
		"varve.metrics.listener": "", "log.index.size.max.bytes": "4096"})
	if err != nil {
		b.Fatal(err)
	}
	img, ids := benchImage(b, size)
	pub := metadata.NewPublisher(img)
	br, err := cluster.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer br.Kill()
	br.UsePublisher(pub)
	br.ApplyImage(img) // creates every log
	if got := br.Gauge("varve_broker_partition_count"); got >= 0 && got != float64(size) {
		b.Fatalf("broker holds %v partitions, want %d", got, size)
	}
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		var rec metadata.Record = metadata.PartitionChangeRecord{TopicID: ids[i%len(ids)], PartitionID: 0, Leader: 1}
		if change == "config" {
			rec = metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: fmt.Sprintf("t%04d", i%len(ids)),
				Name: "retention.ms", Value: new(strconv.Itoa(1000 + i))}
		}
		img, err = metadata.Apply(img, rec)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		br.ApplyImage(img)
	}
}

// benchImage is three registered brokers and size partitions in topics
// of up to 100, every one led by broker 1 with all three as replicas.
func benchImage(b *testing.B, size int) (*metadata.Image, []metadata.TopicID) {
	var recs []metadata.Record
	for id := int32(1); id <= 3; id++ {
		recs = append(recs, metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: int64(id),
			Endpoints: []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9090 + id, SecurityProtocol: "PLAINTEXT"}}})
	}
	per := min(size, 100)
	var ids []metadata.TopicID
	for t := range size / per {
		id := metadata.TopicID{0xbe, byte(t >> 8), byte(t)}
		ids = append(ids, id)
		recs = append(recs, metadata.TopicRecord{Name: fmt.Sprintf("t%04d", t), TopicID: id})
		for p := range per {
			recs = append(recs, metadata.PartitionRecord{TopicID: id, PartitionID: int32(p),
				Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1})
		}
	}
	img, err := metadata.Apply(metadata.New("bench"), recs...)
	if err != nil {
		b.Fatal(err)
	}
	return img, ids
}
