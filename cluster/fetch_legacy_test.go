package cluster_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/varve/varve/record"
)

// Issue: 40 stored zstd batches each holding one record of zeros (a few
// KB compressed, many MiB inflated) and two Fetch v2 requests made
// down-conversion inflate all of them at once. Kafka's
// LazyDownConversionRecords converts within the fetch size; here each
// partition's answer stays within partition_max_bytes and the fetches
// cost a bounded amount of memory.
func TestLegacyFetchDownConversionBomb(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	big := "33554432"
	createTopic(t, b.addr, "bombs", 1, map[string]*string{"max.message.bytes": &big})
	cl := client(t, b.addr)
	const inflated = 16 << 20
	bomb := batchOf(t, record.CompressionZstd, record.Record{Value: make([]byte, inflated), Timestamp: time.Now().UnixMilli()})
	for range 40 {
		if sp := produceRaw(t, cl, "bombs", append([]byte(nil), bomb...), nil); sp.ErrorCode != 0 {
			t.Fatalf("produce: %d", sp.ErrorCode)
		}
	}
	old := client(t, b.addr, kgo.MaxVersions(kversion.V0_10_0())) // Fetch v2
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes = -1, 100, 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "bombs"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 50 << 20 // the whole log, 40 compressed batches
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 2 {
		resp, err := req.RequestWith(ctx(t), old)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || len(p.RecordBatches) > 50<<20 {
			t.Fatalf("error %d, %d bytes of records", p.ErrorCode, len(p.RecordBatches))
		}
		if resp.GetVersion() != 2 {
			t.Fatalf("fetch v%d", resp.GetVersion())
		}
	}
	runtime.ReadMemStats(&after)
	// Without the bound: 2 x 40 x 16 MiB of messages, 1.25 GiB.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Fatalf("two legacy fetches allocated %d MiB", grew>>20)
	}
}
