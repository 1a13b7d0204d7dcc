package controller

import (
	"slices"

	"github.com/varve/varve/metadata"
)

// active reports whether broker id may lead and be in an ISR: it is
// registered, unfenced and not in controlled shutdown. Kafka:
// PartitionChangeBuilder's isAcceptableLeader.
func (c *Controller) active(id int32) bool {
	b, ok := c.img.Broker(id)
	return ok && !b.Fenced && !b.InControlledShutdown
}

// uncleanAllowed reads unclean.leader.election.enable for t: the topic's
// override, else the cluster default.
func (c *Controller) uncleanAllowed(t *metadata.Topic) bool {
	if v, ok := t.Configs["unclean.leader.election.enable"]; ok {
		return v == "true"
	}
	return c.cfg.UncleanLeaderElection
}

// newChange starts a change of partition id of t, with the online
// election (unclean when the topic allows it).
func (c *Controller) newChange(t *metadata.Topic, id int32) *change {
	ch := &change{topic: t, id: id, election: electOnline, active: c.active}
	if c.uncleanAllowed(t) {
		ch.election = electUnclean
	}
	return ch
}

// partitionRef names a partition of the image.
type partitionRef struct {
	topic *metadata.Topic
	id    int32
}

func (r partitionRef) p() *metadata.Partition { return &r.topic.Partitions[r.id] }

// partitionsWhere lists the partitions of the image that match, in topic
// name then partition order.
func (c *Controller) partitionsWhere(match func(*metadata.Partition) bool) []partitionRef {
	var out []partitionRef
	for t := range c.img.Topics() {
		for i := range t.Partitions {
			if match(&t.Partitions[i]) {
				out = append(out, partitionRef{t, int32(i)})
			}
		}
	}
	return out
}

// leads counts the partitions broker b leads.
func (c *Controller) leads(b int32) int {
	return len(c.partitionsWhere(func(p *metadata.Partition) bool { return p.Leader == b }))
}

// removeFromPartitions takes broker b out of every ISR it is in and
// re-elects the leaders it held, in one list of records. Kafka:
// ReplicationControlManager.generateLeaderAndIsrUpdates, used when a
// broker is fenced or shuts down. The caller has already made b
// inactive in the image, so no election picks it.
func (c *Controller) removeFromPartitions(b int32) []metadata.Record {
	var recs []metadata.Record
	touched := c.partitionsWhere(func(p *metadata.Partition) bool {
		return p.Leader == b || slices.Contains(p.ISR, b)
	})
	for _, ref := range touched {
		ch := c.newChange(ref.topic, ref.id)
		ch.isr = shrinkISR(ref.p().ISR, b)
		if rec, ok := ch.build(); ok {
			recs = append(recs, rec)
		}
	}
	return recs
}

// electLeaderless elects a leader for every partition without one whose
// election can now succeed (a broker came back). Kafka:
// handleBrokerUnfenced over partitionsWithNoLeader.
func (c *Controller) electLeaderless() []metadata.Record {
	var recs []metadata.Record
	for _, ref := range c.partitionsWhere(func(p *metadata.Partition) bool { return p.Leader == metadata.NoLeader }) {
		if rec, ok := c.newChange(ref.topic, ref.id).build(); ok {
			recs = append(recs, rec)
		}
	}
	return recs
}
