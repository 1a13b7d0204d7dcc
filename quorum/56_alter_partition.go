package quorum

// AlterPartition (56), versions 0-3 (KIP-497): a partition leader's ISR
// change (controller.AlterPartition). Versions 2+ name topics by id
// (an unknown id: UNKNOWN_TOPIC_ID); version 3's per-member broker
// epochs are read for their broker ids only (KIP-903 not done).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.AlterPartition.Int16(), handle: handleAlterPartition,
		refuse: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrAlterPartitionResponse()
			resp.ErrorCode = code
			return resp
		}})
}

func handleAlterPartition(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.AlterPartitionRequest)
	resp := kmsg.NewPtrAlterPartitionResponse()
	in := controller.AlterPartitionRequest{BrokerID: req.BrokerID, BrokerEpoch: req.BrokerEpoch}
	var unknown []kmsg.AlterPartitionRequestTopic // v2+: ids no topic has
	for _, t := range req.Topics {
		name := t.Topic
		if req.Version >= 2 {
			tm, ok := c.Image().TopicByID(metadata.TopicID(t.TopicID))
			if !ok {
				unknown = append(unknown, t)
				continue
			}
			name = tm.Name
		}
		for _, p := range t.Partitions {
			in.Partitions = append(in.Partitions, alterItem(name, p))
		}
	}
	out, err := c.AlterPartition(in)
	if err != nil {
		return nil, nil, err
	}
	resp.ErrorCode = errorCode(out.Err)
	if out.Err == nil {
		alterResults(c, req.Version, out.Partitions, resp)
		for _, t := range unknown {
			rt := kmsg.NewAlterPartitionResponseTopic()
			rt.TopidID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterPartitionResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.UnknownTopicID.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return out.Records, resp, nil
}

func alterItem(topic string, p kmsg.AlterPartitionRequestTopicPartition) controller.AlterPartitionItem {
	isr := p.NewISR
	if len(p.NewEpochISR) > 0 {
		isr = nil
		for _, m := range p.NewEpochISR {
			isr = append(isr, m.BrokerID)
		}
	}
	return controller.AlterPartitionItem{Topic: topic, Partition: p.Partition, LeaderEpoch: p.LeaderEpoch,
		NewISR: isr, LeaderRecovery: metadata.LeaderRecoveryState(p.LeaderRecoveryState), PartitionEpoch: p.PartitionEpoch}
}

// alterResults groups the results by topic, in request order.
func alterResults(c *controller.Controller, version int16, results []controller.AlterPartitionResult, resp *kmsg.AlterPartitionResponse) {
	for _, r := range results {
		if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].Topic != r.Topic {
			rt := kmsg.NewAlterPartitionResponseTopic()
			rt.Topic = r.Topic
			if t, ok := c.Image().Topic(r.Topic); ok && version >= 2 {
				rt.TopidID = t.ID
			}
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAlterPartitionResponseTopicPartition()
		rp.Partition, rp.ErrorCode = r.Partition, errorCode(r.Err)
		rp.LeaderID, rp.LeaderEpoch, rp.ISR = r.Leader, r.LeaderEpoch, r.ISR
		rp.LeaderRecoveryState, rp.PartitionEpoch = int8(r.LeaderRecovery), r.PartitionEpoch
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
}
