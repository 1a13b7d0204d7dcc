package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// ElectLeaders (api key 43, KIP-460) and the automatic leader rebalance.
// PREFERRED moves a partition's leadership to its first replica when
// that replica is in the ISR and active; UNCLEAN elects a leader for a
// partition that has none, from outside the ISR if it must.

// ElectionType is ElectLeadersRequest.ElectionType.
type ElectionType int8

// Kafka's election types.
const (
	ElectPreferred ElectionType = 0
	ElectUnclean   ElectionType = 1
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// ElectLeadersResponse gives one error per partition asked for (nil
// when the election happened).
type ElectLeadersResponse struct {
	Records []metadata.Record
	Results map[TopicPartition]error
}

// ElectLeaders runs elections of type typ. Errors, as Kafka's
// ReplicationControlManager.electLeader: ELECTION_NOT_NEEDED (the
// preferred replica already leads; for UNCLEAN, the partition has a
// leader), PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE
// (UNCLEAN found no live replica), UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REQUEST for an unknown type. A nil parts asks for every
// partition that needs the election (Kafka's null topics): for
// PREFERRED those not led by their first replica, for UNCLEAN those
// without a leader.
func (c *Controller) ElectLeaders(typ ElectionType, parts []TopicPartition) (ElectLeadersResponse, error) {
	resp := ElectLeadersResponse{Results: map[TopicPartition]error{}}
	if parts == nil {
		parts = c.needingElection(typ)
	}
	for _, tp := range parts {
		rec, err := c.electOne(typ, tp)
		resp.Results[tp] = err
		if rec == nil {
			continue
		}
		if err := c.propose([]metadata.Record{*rec}); err != nil {
			return ElectLeadersResponse{}, err
		}
		resp.Records = append(resp.Records, *rec)
	}
	return resp, nil
}

func (c *Controller) electOne(typ ElectionType, tp TopicPartition) (*metadata.PartitionChangeRecord, error) {
	t, ok := c.img.Topic(tp.Topic)
	if !ok || tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
		return nil, kerr.UnknownTopicOrPartition
	}
	p := &t.Partitions[tp.Partition]
	ch := c.newChange(t, tp.Partition)
	switch typ {
	case ElectPreferred:
		if len(p.Replicas) > 0 && p.Leader == p.Replicas[0] {
			return nil, kerr.ElectionNotNeeded
		}
		ch.election = electPreferred
	case ElectUnclean:
		if p.Leader != metadata.NoLeader {
			return nil, kerr.ElectionNotNeeded
		}
		ch.election = electUnclean
	default:
		return nil, kerr.InvalidRequest
	}
	rec, changed := ch.build()
	switch {
	case typ == ElectPreferred && (!changed || rec.Leader != p.Replicas[0]):
		return nil, kerr.PreferredLeaderNotAvailable
	case typ == ElectUnclean && (!changed || rec.Leader == metadata.NoLeaderChange || rec.Leader == metadata.NoLeader):
		return nil, kerr.EligibleLeadersNotAvailable
	}
	return &rec, nil
}

func (c *Controller) needingElection(typ ElectionType) []TopicPartition {
	var out []TopicPartition
	for _, ref := range c.partitionsWhere(func(p *metadata.Partition) bool {
		if typ == ElectUnclean {
			return p.Leader == metadata.NoLeader
		}
		return len(p.Replicas) > 0 && p.Leader != p.Replicas[0]
	}) {
		out = append(out, TopicPartition{ref.topic.Name, ref.id})
	}
	return out
}

// rebalance moves leaderships back to preferred replicas for every
// broker whose share of partitions it prefers but does not lead is above
// leader.imbalance.per.broker.percentage. Kafka:
// auto.leader.rebalance.enable, checked every
// leader.imbalance.check.interval.seconds.
func (c *Controller) rebalance() ([]metadata.Record, error) {
	var recs []metadata.Record
	for _, b := range c.img.Brokers() {
		if !c.imbalanced(b.ID) {
			continue
		}
		for _, ref := range c.partitionsWhere(func(p *metadata.Partition) bool {
			return len(p.Replicas) > 0 && p.Replicas[0] == b.ID && p.Leader != b.ID
		}) {
			rec, err := c.electOne(ElectPreferred, TopicPartition{ref.topic.Name, ref.id})
			if err != nil {
				continue // the preferred replica cannot lead now; the next check retries
			}
			if err := c.propose([]metadata.Record{*rec}); err != nil {
				return nil, err
			}
			recs = append(recs, *rec)
		}
	}
	return recs, nil
}

// imbalanced reports whether broker b leads too few of the partitions
// it is the preferred replica of.
func (c *Controller) imbalanced(b int32) bool {
	preferred, notLed := 0, 0
	for _, ref := range c.partitionsWhere(func(p *metadata.Partition) bool {
		return len(p.Replicas) > 0 && p.Replicas[0] == b
	}) {
		preferred++
		if ref.p().Leader != b {
			notLed++
		}
	}
	return preferred > 0 && notLed*100 > c.cfg.LeaderImbalancePerBrokerPercentage*preferred
}
