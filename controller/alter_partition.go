package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// AlterPartition (api key 56, KIP-497): a partition leader asks the
// controller to change its ISR (and, after an unclean election, to mark
// its log recovered, KIP-704). Supported: the validation of Kafka's
// ReplicationControlManager.alterPartition with the errors of versions
// 1 and later (INELIGIBLE_REPLICA). Not done: version 3's per-member
// broker epochs (KIP-903); members are checked against the current
// registrations only.

// AlterPartitionRequest is one leader's request.
type AlterPartitionRequest struct {
	BrokerID    int32
	BrokerEpoch int64
	Partitions  []AlterPartitionItem
}

// AlterPartitionItem is the change asked for one partition.
type AlterPartitionItem struct {
	Topic          string
	Partition      int32
	LeaderEpoch    int32
	NewISR         []int32
	LeaderRecovery metadata.LeaderRecoveryState
	PartitionEpoch int32
}

// AlterPartitionResponse answers the request: Err for the whole of it,
// else one result per item, in order.
type AlterPartitionResponse struct {
	Records    []metadata.Record
	Err        error
	Partitions []AlterPartitionResult
}

// AlterPartitionResult is the partition's state after the request (its
// state when Err is NEW_LEADER_ELECTED or nil), or an error.
type AlterPartitionResult struct {
	Topic          string
	Partition      int32
	Err            error
	Leader         int32
	LeaderEpoch    int32
	ISR            []int32
	LeaderRecovery metadata.LeaderRecoveryState
	PartitionEpoch int32
}

// AlterPartition validates and applies a leader's ISR changes. An
// accepted change bumps the partition epoch; a change that makes the
// leader ineligible (it is shutting down) or that completes a
// reassignment removing it elects another leader and answers
// NEW_LEADER_ELECTED.
func (c *Controller) AlterPartition(req AlterPartitionRequest) (AlterPartitionResponse, error) {
	if b, ok := c.img.Broker(req.BrokerID); !ok || b.Epoch != req.BrokerEpoch {
		return AlterPartitionResponse{Err: kerr.StaleBrokerEpoch}, nil
	}
	var resp AlterPartitionResponse
	for _, it := range req.Partitions {
		res := AlterPartitionResult{Topic: it.Topic, Partition: it.Partition}
		recs, err := c.alterOne(req.BrokerID, it, &res)
		if err != nil {
			return AlterPartitionResponse{}, err
		}
		resp.Records = append(resp.Records, recs...)
		resp.Partitions = append(resp.Partitions, res)
	}
	return resp, nil
}

func (c *Controller) alterOne(leader int32, it AlterPartitionItem, res *AlterPartitionResult) ([]metadata.Record, error) {
	t, ok := c.img.Topic(it.Topic)
	if !ok || it.Partition < 0 || int(it.Partition) >= len(t.Partitions) {
		res.Err = kerr.UnknownTopicOrPartition
		return nil, nil
	}
	if res.Err = c.validateAlter(leader, &t.Partitions[it.Partition], it); res.Err != nil {
		return nil, nil
	}
	ch := c.newChange(t, it.Partition)
	ch.election, ch.isr, ch.recovery = electOnline, slices.Clone(it.NewISR), &it.LeaderRecovery
	var recs []metadata.Record
	if rec, changed := ch.build(); changed {
		recs = append(recs, rec)
		if err := c.propose(recs); err != nil {
			return nil, err
		}
		if rec.Leader != metadata.NoLeaderChange {
			res.Err = kerr.NewLeaderElected
		}
	}
	t, _ = c.img.Topic(it.Topic)
	p := &t.Partitions[it.Partition]
	res.Leader, res.LeaderEpoch, res.ISR = p.Leader, p.LeaderEpoch, p.ISR
	res.LeaderRecovery, res.PartitionEpoch = p.LeaderRecovery, p.PartitionEpoch
	return recs, nil
}

// validateAlter checks one item in Kafka's order
// (ReplicationControlManager.validateAlterPartitionData).
func (c *Controller) validateAlter(leader int32, p *metadata.Partition, it AlterPartitionItem) error {
	switch {
	case it.LeaderEpoch != p.LeaderEpoch:
		return kerr.FencedLeaderEpoch
	case p.Leader != leader:
		return kerr.InvalidRequest // only the leader alters its partition
	case it.PartitionEpoch != p.PartitionEpoch:
		return kerr.InvalidUpdateVersion
	case it.LeaderRecovery != metadata.Recovered && it.LeaderRecovery != metadata.Recovering:
		return kerr.InvalidRequest
	case it.LeaderRecovery == metadata.Recovering && p.LeaderRecovery == metadata.Recovered:
		return kerr.InvalidRequest // a recovered log does not go back to recovering
	case it.LeaderRecovery == metadata.Recovering && len(it.NewISR) > 1:
		return kerr.InvalidRequest // a recovering leader is alone in its ISR
	case !slices.Contains(it.NewISR, leader) || hasDuplicates(it.NewISR):
		return kerr.InvalidRequest
	}
	for _, r := range it.NewISR {
		if !slices.Contains(p.Replicas, r) || (r != leader && !c.active(r)) {
			return kerr.IneligibleReplica
		}
	}
	return nil
}

// hasDuplicates reports whether a list from a request names a broker
// twice, in time linear in its length, however long the request made it.
func hasDuplicates(s []int32) bool {
	seen := make(map[int32]struct{}, len(s))
	for _, r := range s {
		if _, dup := seen[r]; dup {
			return true
		}
		seen[r] = struct{}{}
	}
	return false
}
