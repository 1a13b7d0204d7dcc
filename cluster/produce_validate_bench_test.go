package cluster_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/record"
)

// BenchmarkProduceValidation measures Produce through the socket, with
// record validation (what Varve does, as Kafka) and without, for
// uncompressed, lz4 and zstd batches of 1 KiB and 16 KiB of records. Each
// case reports throughput (SetBytes) and the process's CPU time per MB
// produced (cpu-ms/MB); compare on and off of one run:
//
//	go test ./cluster -run '^$' -bench BenchmarkProduceValidation -benchtime 3s
func BenchmarkProduceValidation(b *testing.B) {
	tb := startBroker(b, b.TempDir(), nil)
	cl := client(b, tb.addr)
	for _, codec := range []record.Compression{record.CompressionNone, record.CompressionLZ4, record.CompressionZstd} {
		for _, size := range []int{1 << 10, 16 << 10} {
			topic := fmt.Sprintf("bench-%v-%d", codec, size)
			createTopic(b, tb.addr, topic, 1, nil)
			batch, raw := benchBatch(b, codec, size)
			for _, on := range []bool{true, false} {
				name := fmt.Sprintf("%v/%dKiB/validation=%v", codec, size>>10, on)
				b.Run(name, func(b *testing.B) {
					cluster.SetRecordValidation(on)
					defer cluster.SetRecordValidation(true)
					benchProduce(b, cl, topic, batch, raw)
				})
			}
		}
	}
}

// benchBatch builds a batch of 100-byte records, half repeated text and
// half counter, totalling size bytes before compression.
func benchBatch(b *testing.B, codec record.Compression, size int) ([]byte, int) {
	bb := record.NewBatchBuilder(codec)
	now := time.Now().UnixMilli()
	for i := 0; bb.UncompressedSize() < size; i++ {
		v := fmt.Appendf(nil, "%050d event payload for the produce validation benchmark....", i)
		bb.Append(record.Record{Key: fmt.Appendf(nil, "key-%d", i%64), Value: v[:80], Timestamp: now})
	}
	batch, err := bb.Build()
	if err != nil {
		b.Fatal(err)
	}
	return batch, bb.UncompressedSize()
}

func benchProduce(b *testing.B, cl kmsg.Requestor, topic string, batch []byte, raw int) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	b.SetBytes(int64(raw))
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		resp, err := req.RequestWith(b.Context(), cl)
		if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			b.Fatalf("produce: %v %+v", err, resp)
		}
	}
	b.StopTimer()
	mb := float64(b.N) * float64(raw) / 1e6
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/mb, "cpu-ms/MB")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
