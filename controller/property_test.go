package controller

import (
	"fmt"
	"testing"

	"github.com/varve/varve/metadata"
	"pgregory.net/rapid"
)

// TestInvariants drives a controller with random events (registrations,
// heartbeats that catch up, fall behind, ask to be fenced or to shut
// down, the passing of time, topic creations, AlterPartitions,
// elections, reassignments, producer-id allocations, failovers) and
// checks after each one what Kafka's controller guarantees:
//
//   - a leader is in the ISR, and every ISR member is a replica
//     (Kafka: PartitionChangeBuilder);
//   - fenced brokers and brokers in controlled shutdown lead nothing and
//     are in no ISR, except as the last ISR member of a partition
//     without a leader (KIP-841);
//   - leader epochs and partition epochs never decrease, and the leader
//     epoch moves whenever the leader does;
//   - producer-id blocks never overlap (KIP-730);
//   - replaying the records returned, with metadata.Apply, gives the
//     controller's own image, and the log offsets count them.
func TestInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newModel()
		for i := range rapid.IntRange(1, 120).Draw(t, "events") {
			recs := m.step(t)
			m.replay(t, i, recs)
			m.check(t)
		}
	})
}

type model struct {
	c        *Controller
	now      int64
	replayed *metadata.Image
	offset   int64
	epochs   map[string][2]int32 // partition -> leader epoch, partition epoch
	leaders  map[string]int32
	pidEnd   int64 // the end of the last block handed out
	nextID   byte
}

func newModel() *model {
	m := &model{epochs: map[string][2]int32{}, leaders: map[string]int32{}, replayed: metadata.New("test")}
	cfg := DefaultConfig()
	cfg.NewTopicID = func() metadata.TopicID {
		m.nextID++
		var id metadata.TopicID
		id[15] = m.nextID
		return id
	}
	m.c = New(cfg, m.replayed, 0, 0)
	return m
}

var brokerIDs = rapid.Int32Range(1, 5)

func (m *model) step(t *rapid.T) []metadata.Record {
	var recs []metadata.Record
	var err error
	switch rapid.IntRange(0, 9).Draw(t, "event") {
	case 0:
		recs, err = m.register(t)
	case 1, 2:
		recs, err = m.heartbeat(t)
	case 3:
		m.now += rapid.Int64Range(0, 6000).Draw(t, "ms")
		recs, err = m.c.Tick(m.now)
	case 4:
		recs, err = m.createTopic(t)
	case 5, 6:
		recs, err = m.alterPartition(t)
	case 7:
		recs, err = m.elect(t)
	case 8:
		recs, err = m.reassign(t)
	case 9:
		recs, err = m.allocOrRestart(t)
	}
	if err != nil {
		t.Fatalf("controller error: %v", err)
	}
	return recs
}

func (m *model) register(t *rapid.T) ([]metadata.Record, error) {
	var inc [16]byte
	inc[0] = byte(rapid.IntRange(0, 1).Draw(t, "incarnation"))
	r, err := m.c.Register(m.now, RegisterRequest{BrokerID: brokerIDs.Draw(t, "broker"),
		Rack: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "rack"), IncarnationID: inc, PreviousBrokerEpoch: -1})
	return r.Records, err
}

func (m *model) heartbeat(t *rapid.T) ([]metadata.Record, error) {
	id := brokerIDs.Draw(t, "broker")
	b, ok := m.c.Image().Broker(id)
	if !ok {
		return nil, nil
	}
	req := HeartbeatRequest{BrokerID: id, BrokerEpoch: b.Epoch, MetadataOffset: m.c.EndOffset() - 1}
	switch rapid.IntRange(0, 9).Draw(t, "kind") {
	case 0:
		req.MetadataOffset = b.Epoch - 1
	case 1:
		req.WantFence = true
	case 2:
		req.WantShutDown = true
	}
	r, err := m.c.Heartbeat(m.now, req)
	return r.Records, err
}

func (m *model) createTopic(t *rapid.T) ([]metadata.Record, error) {
	ct := CreatableTopic{Name: fmt.Sprintf("t%d", m.nextID), NumPartitions: rapid.Int32Range(1, 3).Draw(t, "partitions"),
		ReplicationFactor: int16(rapid.IntRange(1, 3).Draw(t, "rf"))}
	if rapid.Bool().Draw(t, "unclean") {
		ct.Configs = map[string]string{"unclean.leader.election.enable": "true"}
	}
	recs, _, err := m.c.CreateTopics([]CreatableTopic{ct})
	return recs, err
}

// pick draws a partition of the image, or false when there is none.
func (m *model) pick(t *rapid.T) (string, int32, *metadata.Partition, bool) {
	var parts []TopicPartition
	for tp := range m.c.Image().Topics() {
		for i := range tp.Partitions {
			parts = append(parts, TopicPartition{tp.Name, int32(i)})
		}
	}
	if len(parts) == 0 {
		return "", 0, nil, false
	}
	tp := rapid.SampledFrom(parts).Draw(t, "partition")
	p, _ := m.c.Image().Partition(tp.Topic, tp.Partition)
	return tp.Topic, tp.Partition, p, true
}

func (m *model) alterPartition(t *rapid.T) ([]metadata.Record, error) {
	name, id, p, ok := m.pick(t)
	if !ok || p.Leader < 0 {
		return nil, nil
	}
	isr := []int32{p.Leader}
	for _, r := range p.Replicas {
		if r != p.Leader && rapid.Bool().Draw(t, "in-isr") {
			isr = append(isr, r)
		}
	}
	b, _ := m.c.Image().Broker(p.Leader)
	it := AlterPartitionItem{Topic: name, Partition: id, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
		NewISR: isr, LeaderRecovery: metadata.Recovered}
	if rapid.IntRange(0, 4).Draw(t, "stale") == 0 {
		it.PartitionEpoch--
	}
	r, err := m.c.AlterPartition(AlterPartitionRequest{BrokerID: p.Leader, BrokerEpoch: b.Epoch, Partitions: []AlterPartitionItem{it}})
	return r.Records, err
}

func (m *model) elect(t *rapid.T) ([]metadata.Record, error) {
	name, id, _, ok := m.pick(t)
	if !ok {
		return nil, nil
	}
	typ := ElectionType(rapid.IntRange(0, 1).Draw(t, "type"))
	r, err := m.c.ElectLeaders(typ, []TopicPartition{{name, id}})
	return r.Records, err
}

func (m *model) reassign(t *rapid.T) ([]metadata.Record, error) {
	name, id, _, ok := m.pick(t)
	if !ok {
		return nil, nil
	}
	r := Reassignment{Topic: name, Partition: id}
	if !rapid.Bool().Draw(t, "cancel") {
		r.Replicas = rapid.SliceOfNDistinct(brokerIDs, 1, 3, func(b int32) int32 { return b }).Draw(t, "replicas")
	}
	resp, err := m.c.AlterPartitionReassignments([]Reassignment{r})
	return resp.Records, err
}

func (m *model) allocOrRestart(t *rapid.T) ([]metadata.Record, error) {
	if rapid.IntRange(0, 3).Draw(t, "restart") == 0 {
		m.c = New(m.c.cfg, m.c.Image(), m.c.EndOffset(), m.now)
		return nil, nil
	}
	id := brokerIDs.Draw(t, "broker")
	b, ok := m.c.Image().Broker(id)
	if !ok {
		return nil, nil
	}
	r, err := m.c.AllocateProducerIds(id, b.Epoch)
	if err == nil && r.Err == nil {
		if r.Start < m.pidEnd {
			t.Fatalf("producer id block %d+%d overlaps ids up to %d", r.Start, r.Len, m.pidEnd)
		}
		m.pidEnd = r.Start + int64(r.Len)
	}
	return r.Records, err
}

func (m *model) replay(t *rapid.T, event int, recs []metadata.Record) {
	next, err := metadata.Apply(m.replayed, recs...)
	if err != nil {
		t.Fatalf("event %d: records do not replay: %v", event, err)
	}
	m.replayed, m.offset = next, m.offset+int64(len(recs))
	if got, want := describeImage(m.replayed), describeImage(m.c.Image()); got != want {
		t.Fatalf("event %d: replayed image\n%s\ncontroller's image\n%s", event, got, want)
	}
	if m.c.EndOffset() != m.offset {
		t.Fatalf("event %d: end offset %d, %d records", event, m.c.EndOffset(), m.offset)
	}
}

func (m *model) check(t *rapid.T) {
	img := m.c.Image()
	for tp := range img.Topics() {
		for i := range tp.Partitions {
			key := fmt.Sprintf("%s-%d", tp.Name, i)
			m.checkPartition(t, img, key, &tp.Partitions[i])
		}
	}
}

func (m *model) checkPartition(t *rapid.T, img *metadata.Image, key string, p *metadata.Partition) {
	if err := checkPartition(img, p); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	prev, seen := m.epochs[key]
	if seen && (p.LeaderEpoch < prev[0] || p.PartitionEpoch < prev[1]) {
		t.Fatalf("%s: epochs went back from %v to [%d %d]", key, prev, p.LeaderEpoch, p.PartitionEpoch)
	}
	if seen && p.Leader != m.leaders[key] && p.LeaderEpoch == prev[0] {
		t.Fatalf("%s: leader moved from %d to %d in epoch %d", key, m.leaders[key], p.Leader, p.LeaderEpoch)
	}
	m.epochs[key], m.leaders[key] = [2]int32{p.LeaderEpoch, p.PartitionEpoch}, p.Leader
}
