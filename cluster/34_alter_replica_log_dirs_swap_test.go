package cluster_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// Kafka: Partition.maybeReplaceCurrentWithFutureReplica swaps the logs
// under the partition's write lock, and reads take its read lock: a
// Fetch or a ListOffsets arriving during the swap waits for it and is
// served from the moved log, never KAFKA_STORAGE_ERROR (nor, from a log
// closed under the read, OFFSET_OUT_OF_RANGE). The move is held at
// each step of its swap while a Fetch and a ListOffsets are issued;
// neither answers while it is held; both answer with the data once it
// is released.
func TestAlterReplicaLogDirsReadsWaitForTheSwap(t *testing.T) {
	for _, step := range []logdir.MoveStep{logdir.StepSourceClosed, logdir.StepFutureComplete, logdir.StepSourceRenamed} {
		t.Run(stepName(step), func(t *testing.T) { readsWaitAt(t, step) })
	}
}

func stepName(s logdir.MoveStep) string {
	return map[logdir.MoveStep]string{logdir.StepSourceClosed: "source closed",
		logdir.StepFutureComplete: "future complete", logdir.StepSourceRenamed: "source renamed"}[s]
}

func readsWaitAt(t *testing.T, step logdir.MoveStep) {
	b, d1, d2 := twoDirBroker(t)
	createTopic(t, b.addr, "sw", 1, nil)
	prod := client(t, b.addr, kgo.DefaultProduceTopic("sw"))
	var recs []*kgo.Record
	for i := 0; i < 50; i++ {
		recs = append(recs, &kgo.Record{Value: []byte("swap")})
	}
	produceSync(t, prod, recs...)
	dst := d2
	if describeReplicas(t, b.addr, "sw", 0)[0].dir == d2 {
		dst = d1
	}
	held, release := make(chan struct{}), make(chan struct{})
	b.LogDirs().SetMoveHook(func(_ segment.TopicPartition, s logdir.MoveStep) bool {
		if s == step {
			close(held)
			<-release
		}
		return true
	})
	if code := alterLogDirs(t, b.addr, dst, "sw", 0); code != 0 {
		t.Fatalf("alter: code %d", code)
	}
	<-held
	fc, lc := dial(t, b.addr), dial(t, b.addr)
	if _, err := fc.Write(fetchRequest(11, "sw", 1, 0, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Write(listOffsetsRequest("sw")); err != nil {
		t.Fatal(err)
	}
	// Held: no answer (before the change, KAFKA_STORAGE_ERROR at once).
	for _, c := range []net.Conn{fc, lc} {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		var one [1]byte
		if n, err := c.Read(one[:]); n > 0 || !isTimeout(err) {
			close(release)
			t.Fatalf("an answer during the swap (%d bytes, %v); want the read to wait", n, err)
		}
	}
	close(release)
	resp, _ := readFetchResponse(t, fc, 11)
	fp := resp.Topics[0].Partitions[0]
	if fp.ErrorCode != 0 || fp.HighWatermark != 50 || len(fp.RecordBatches) == 0 {
		t.Fatalf("fetch during the swap: code %d, high watermark %d, %d bytes; want the 50 records",
			fp.ErrorCode, fp.HighWatermark, len(fp.RecordBatches))
	}
	lo := readListOffsetsResponse(t, lc)
	if p := lo.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != 50 {
		t.Fatalf("list offsets during the swap: code %d, offset %d; want 50", p.ErrorCode, p.Offset)
	}
	waitFor(t, 30*time.Second, "the partition in the destination", func() bool {
		r := describeReplicas(t, b.addr, "sw", 0)
		return len(r) == 1 && r[0].dir == dst && !r[0].future
	})
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// listOffsetsRequest asks topic's partition 0 for its latest offset
// (ListOffsets v5).
func listOffsetsRequest(topic string) []byte {
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(5)
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return frame(kmsg.ListOffsets.Int16(), 5, req.AppendTo(nil))
}

func readListOffsetsResponse(t *testing.T, c net.Conn) *kmsg.ListOffsetsResponse {
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
	resp := kmsg.NewPtrListOffsetsResponse()
	resp.SetVersion(5)
	if err := resp.ReadFrom(buf[4:]); err != nil {
		t.Fatalf("decode response: %v", err)
	}
	return resp
}
