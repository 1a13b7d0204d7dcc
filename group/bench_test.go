package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// discardLog counts what is appended and keeps nothing: the benchmarks
// measure the coordinator's CPU cost, not a device.
type discardLog struct{ bytes int64 }

func (l *discardLog) Append(b []byte) error { l.bytes += int64(len(b)); return nil }

func commitRequest(groupID string, partitions int, offset int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 9, groupID, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "events"
	for p := 0; p < partitions; p++ {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = int32(p), offset
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
	return req
}

// BenchmarkCommitOffsets: one OffsetCommit of n partitions, validated,
// encoded as Kafka's records in one batch and applied. Bytes are the
// batch bytes written to __consumer_offsets.
func BenchmarkCommitOffsets(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			log := &discardLog{}
			c := New(0, testConfig(), log)
			c.BeginLoad()
			now := time.Unix(1_700_000_000, 0)
			c.FinishLoad(now)
			req := commitRequest("bench", n, 1)
			c.CommitOffsets(now, req)
			b.SetBytes(log.bytes)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req.Topics[0].Partitions[0].Offset = int64(i)
				if resp := c.CommitOffsets(now, req); resp.Topics[0].Partitions[0].ErrorCode != 0 {
					b.Fatal(resp.Topics[0].Partitions[0].ErrorCode)
				}
			}
		})
	}
}

// BenchmarkHeartbeat: a Stable member's heartbeat (validation and a
// deadline replaced in the timer heap). No bytes are written.
func BenchmarkHeartbeat(b *testing.B) {
	h := newHarness(b, testConfig())
	ids := h.stableGroup("g", 10)
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 4, "g", ids[3], 1
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if h.c.Heartbeat(h.now, req).ErrorCode != 0 {
			b.Fatal("heartbeat failed")
		}
	}
}

// BenchmarkLoad: replaying a partition of __consumer_offsets at start-up
// (1000 groups, 16 partitions each, committed 4 times: 64,000 records).
// Bytes are the log bytes replayed.
func BenchmarkLoad(b *testing.B) {
	log := &MemoryLog{}
	c := New(0, testConfig(), log)
	c.BeginLoad()
	now := time.Unix(1_700_000_000, 0)
	c.FinishLoad(now)
	for round := int64(0); round < 4; round++ {
		for g := 0; g < 1000; g++ {
			c.CommitOffsets(now, commitRequest(fmt.Sprintf("group-%d", g), 16, round))
		}
	}
	buf := log.Bytes()
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l := New(0, testConfig(), &discardLog{})
		l.BeginLoad()
		if _, err := l.Load(buf); err != nil {
			b.Fatal(err)
		}
		if rep := l.FinishLoad(now); rep.Offsets != 16_000 {
			b.Fatalf("loaded %d offsets", rep.Offsets)
		}
	}
}
