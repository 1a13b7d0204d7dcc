package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/metadata"
)

// Kafka: Uuid.randomUuid gives topic ids that are random version 4
// UUIDs; the controller's default source draws distinct ones, and never
// the zero id Kafka reserves.
func TestDefaultTopicIDs(t *testing.T) {
	seen := map[metadata.TopicID]bool{}
	for range 1000 {
		id := DefaultConfig().NewTopicID()
		if id == (metadata.TopicID{}) || seen[id] {
			t.Fatalf("topic id %x drawn twice or zero", id)
		}
		if id[6]>>4 != 4 || id[8]>>6 != 2 {
			t.Fatalf("topic id %x is not a version 4 UUID", id)
		}
		seen[id] = true
	}
}

// Bad input costs time in proportion to its size: an AlterPartition
// naming a million ISR members is refused (INVALID_REQUEST, a member
// named twice) without quadratic work.
func TestAlterPartitionLongISR(t *testing.T) {
	h := newHarness(DefaultConfig())
	for _, cmd := range []string{"register", "heartbeat"} {
		if _, err := h.run(cmd, map[string]string{"id": "1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.run("create-topic", map[string]string{"name": "t", "partitions": "1", "rf": "1"}); err != nil {
		t.Fatal(err)
	}
	isr := make([]int32, 1_000_000) // 1, 2, ..., the last two alike
	for i := range isr {
		isr[i] = int32(i + 1)
	}
	isr[len(isr)-1] = isr[len(isr)-2]
	resp, err := h.c.AlterPartition(AlterPartitionRequest{BrokerID: 1, BrokerEpoch: 0,
		Partitions: []AlterPartitionItem{{Topic: "t", Partition: 0, NewISR: isr}}})
	if err != nil || resp.Partitions[0].Err != kerr.InvalidRequest {
		t.Fatalf("a million ISR members accepted: %v %+v", err, resp.Partitions[0])
	}
}
