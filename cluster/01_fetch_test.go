package cluster_test

import (
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchRequest names topic's partition 0 copies times, at offset, with
// max_wait 20 s and min_bytes 1: it parks on an empty partition.
func fetchRequest(version int16, topic string, copies int, offset int64, maxBytes int32) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 20000, 1, maxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rt.Partitions = make([]kmsg.FetchRequestTopicPartition, copies)
	for i := range rt.Partitions {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes = offset, 1<<20
		rt.Partitions[i] = rp
	}
	req.Topics = append(req.Topics, rt)
	return frame(kmsg.Fetch.Int16(), version, req.AppendTo(nil))
}

// readFetchResponse reads one Fetch response from c.
func readFetchResponse(t *testing.T, c net.Conn, version int16) (*kmsg.FetchResponse, int) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("read response: %v", err)
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("read response: %v", err)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	if err := resp.ReadFrom(buf[4:]); err != nil { // after the correlation id
		t.Fatalf("decode response: %v", err)
	}
	return resp, len(buf)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func waitParked(t *testing.T, b *testBroker, n int) {
	t.Helper()
	waitFor(t, 30*time.Second, "fetches parked", func() bool { return b.Parked() == n })
}

// goMemory is the memory the Go runtime holds from the system: heap,
// goroutine stacks and its own structures, less what it gave back.
func goMemory() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// peakMemory samples goMemory every millisecond until stop is closed and
// then returns the highest value seen.
func peakMemory(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		peak := goMemory()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				peak = max(peak, goMemory())
			case <-stop:
				out <- max(peak, goMemory())
				return
			}
		}
	}()
	return out
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// The probe of issue 11: a Fetch (v4, 6 MB) naming one partition 400,000
// times with max_wait 20 s, four in parallel. Each parks as one
// operation on one partition, holding neither its request nor a
// goroutine per partition, and is answered once per partition when a
// record arrives.
// Kafka: FetchRequest.fetchData reads the partitions into a LinkedHashMap,
// so a partition named twice is answered once.
func TestFetchNamingOnePartitionManyTimes(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "amp", 1, nil)
	const copies, parallel = 400_000, 4
	baseHeap, baseG, baseMem := heapInUse(), runtime.NumGoroutine(), goMemory()
	stopSampling := make(chan struct{})
	peak := peakMemory(stopSampling)
	probe := fetchRequest(4, "amp", copies, 0, 1<<20)
	if len(probe) < 6_000_000 {
		t.Fatalf("probe is %d bytes", len(probe))
	}
	conns := make([]net.Conn, parallel)
	var wg sync.WaitGroup
	for i := range conns {
		conns[i] = dial(t, b.addr)
		wg.Go(func() { conns[i].Write(probe) })
	}
	wg.Wait()
	waitParked(t, b, parallel)
	close(stopSampling)
	peakMem := <-peak
	probe = nil
	parkedHeap, parkedG := heapInUse(), runtime.NumGoroutine()
	t.Logf("heap in use %d MiB idle, %d MiB with %d probes parked; goroutines %d, %d; Go memory %d MiB idle, peak %d MiB while the probes were sent and parked",
		baseHeap>>20, parkedHeap>>20, parallel, baseG, parkedG, baseMem>>20, peakMem>>20)
	if grow := int64(peakMem) - int64(baseMem); grow > 1<<30 {
		t.Fatalf("the Go runtime grew by %d MiB for %d probes", grow>>20, parallel)
	}
	if grow := int64(parkedHeap) - int64(baseHeap); grow > 64<<20 {
		t.Fatalf("%d parked probes hold %d MiB", parallel, grow>>20)
	}
	if parkedG-baseG > 20 {
		t.Fatalf("%d parked probes added %d goroutines", parallel, parkedG-baseG)
	}
	produceSync(t, client(t, b.addr, kgo.DefaultProduceTopic("amp")), &kgo.Record{Value: []byte("one")})
	for _, c := range conns {
		resp, _ := readFetchResponse(t, c, 4)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("answered %d topics, the first with %d partitions: want the partition once", len(resp.Topics), len(resp.Topics[0].Partitions))
		}
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != 1 || len(p.RecordBatches) == 0 {
			t.Fatalf("partition: error %d, hw %d, %d bytes of records", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
		}
	}
}

// A partition named twice takes the offset of its last mention, at the
// place of its first (Kafka's LinkedHashMap put), and the response stays
// within max_bytes beyond the first batch (KIP-74).
func TestFetchDuplicatesTakeTheLastOffsetWithinMaxBytes(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "dup", 2, nil)
	pc := client(t, b.addr, kgo.DefaultProduceTopic("dup"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 50 {
		produceSync(t, pc, &kgo.Record{Partition: int32(i % 2), Value: make([]byte, 1000)})
	}
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.ReplicaID, req.MaxBytes = -1, 5000
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "dup"
	for _, pick := range []struct {
		p   int32
		off int64
	}{{1, 0}, {0, 0}, {1, 20}, {0, 3}} {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = pick.p, pick.off, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	c := dial(t, b.addr)
	c.Write(frame(kmsg.Fetch.Int16(), 11, req.AppendTo(nil)))
	resp, _ := readFetchResponse(t, c, 11)
	var answered []int32
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			answered = append(answered, rp.Partition)
		}
	}
	if !slices.Equal(answered, []int32{1, 0}) {
		t.Fatalf("answered partitions %v, want [1 0]", answered)
	}
	parts := resp.Topics[0].Partitions
	total := 0
	for i, want := range []int64{20, 3} {
		if batches := parts[i].RecordBatches; len(batches) > 0 {
			if first := int64(binary.BigEndian.Uint64(batches)); first != want {
				t.Fatalf("partition %d read from %d, want the last mention's offset %d", parts[i].Partition, first, want)
			}
			total += len(batches)
		}
	}
	if total == 0 || total > 5000 {
		t.Fatalf("%d bytes of records for max_bytes 5000", total)
	}
}

// 1,000 fetches parked at once cost no goroutine each: one reaper serves
// them all, and the append that satisfies them answers them.
// Kafka: DelayedOperationPurgatory (no thread per delayed operation).
func TestParkedFetchesStartNoGoroutines(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "many", 1, nil)
	const n = 1000
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dial(t, b.addr)
	}
	time.Sleep(100 * time.Millisecond) // connections accepted
	before := runtime.NumGoroutine()
	req := fetchRequest(11, "many", 1, 0, 1<<20)
	for _, c := range conns {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	waitParked(t, b, n)
	if after := runtime.NumGoroutine(); after-before > 20 {
		t.Fatalf("goroutines %d before %d parked fetches, %d with them", before, n, after)
	}
	produceSync(t, client(t, b.addr, kgo.DefaultProduceTopic("many")), &kgo.Record{Value: []byte("go")})
	for _, c := range conns {
		resp, _ := readFetchResponse(t, c, 11)
		if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
			t.Fatalf("partition: error %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
		}
	}
	if b.Parked() != 0 {
		t.Fatalf("%d still parked", b.Parked())
	}
}
