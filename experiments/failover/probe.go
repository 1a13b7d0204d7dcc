package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// probeTimeout bounds one probe request; a dead node must not hold a
// polling loop up for long.
const probeTimeout = 500 * time.Millisecond

// pollEvery is how often a trial polls Metadata or DescribeQuorum: the
// resolution of the "leader moved" times.
const pollEvery = 10 * time.Millisecond

// probes sends requests to one chosen node at a time: one kgo client per
// node, seeded with that node alone, so a request goes exactly where the
// trial says (kgo would otherwise route Metadata to any broker and
// DescribeQuorum through its own controller lookup).
type probes struct {
	clients map[int32]*kgo.Client
}

func newProbes(s *system) (*probes, error) {
	p := &probes{clients: map[int32]*kgo.Client{}}
	for _, id := range s.ids() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(s.addrs[id]), kgo.DialTimeout(probeTimeout), kgo.RequestRetries(0))
		if err != nil {
			p.close()
			return nil, err
		}
		p.clients[id] = cl
	}
	return p, nil
}

func (p *probes) close() {
	for _, cl := range p.clients {
		cl.Close()
	}
}

// ask sends req to node id and waits at most probeTimeout.
func (p *probes) ask(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return p.clients[id].SeedBrokers()[0].Request(ctx, req)
}

// partState is a partition's leadership as one broker's metadata shows it.
type partState struct {
	leader, epoch int32
	replicas, isr []int32
	brokers       int // brokers the response lists (Kafka lists the unfenced ones)
}

// partition asks node id for topic's partition 0.
func (p *probes) partition(ctx context.Context, id int32, topic string) (partState, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	resp, err := p.ask(ctx, id, req)
	if err != nil {
		return partState{}, err
	}
	md := resp.(*kmsg.MetadataResponse)
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) == 0 {
		return partState{}, fmt.Errorf("node %d: no metadata for %s", id, topic)
	}
	if err := kerr.ErrorForCode(md.Topics[0].ErrorCode); err != nil {
		return partState{}, fmt.Errorf("node %d: metadata for %s: %w", id, topic, err)
	}
	for _, pt := range md.Topics[0].Partitions {
		if pt.Partition == 0 {
			return partState{leader: pt.Leader, epoch: pt.LeaderEpoch, replicas: pt.Replicas, isr: pt.ISR,
				brokers: len(md.Brokers)}, nil
		}
	}
	return partState{}, fmt.Errorf("node %d: %s has no partition 0", id, topic)
}

// quorumState is the KRaft quorum as DescribeQuorum (API 55) answers it.
type quorumState struct {
	leader, epoch int32
	hw            int64
	voters        []kmsg.DescribeQuorumResponseTopicPartitionReplicaState
}

// quorum asks node id's broker listener for the metadata quorum's state
// (both systems forward the request to the active controller).
func (p *probes) quorum(ctx context.Context, id int32) (quorumState, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = "__cluster_metadata"
	pt := kmsg.NewDescribeQuorumRequestTopicPartition()
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)
	resp, err := p.ask(ctx, id, req)
	if err != nil {
		return quorumState{}, err
	}
	dq := resp.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(dq.ErrorCode); err != nil {
		return quorumState{}, fmt.Errorf("node %d: describe quorum: %w", id, err)
	}
	if len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
		return quorumState{}, fmt.Errorf("node %d: describe quorum: no partition", id)
	}
	qp := dq.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(qp.ErrorCode); err != nil {
		return quorumState{}, fmt.Errorf("node %d: describe quorum: %w", id, err)
	}
	return quorumState{leader: qp.LeaderID, epoch: qp.LeaderEpoch, hw: qp.HighWatermark, voters: qp.CurrentVoters}, nil
}

// first asks each of ids in turn until one answers, returning the
// first answer (or every error).
func first[T any](ctx context.Context, ids []int32, ask func(context.Context, int32) (T, error)) (T, error) {
	var errs []error
	for _, id := range ids {
		v, err := ask(ctx, id)
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
	}
	var zero T
	return zero, errors.Join(errs...)
}

// until calls check every pollEvery until it reports done, ctx ends or
// timeout passes; it returns when check first reported done.
func until(ctx context.Context, timeout time.Duration, what string, check func(context.Context) (bool, error)) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		ok, err := check(ctx)
		if ok {
			return time.Now(), nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%s: not within %v (last error: %v)", what, timeout, last)
		case <-time.After(pollEvery):
		}
	}
}

// waitBrokers waits until a node's metadata lists every node as a broker.
func waitBrokers(ctx context.Context, s *system, timeout time.Duration) error {
	p, err := newProbes(s)
	if err != nil {
		return err
	}
	defer p.close()
	_, err = until(ctx, timeout, "three brokers in the metadata", func(ctx context.Context) (bool, error) {
		for _, id := range s.ids() {
			req := kmsg.NewPtrMetadataRequest()
			resp, err := p.ask(ctx, id, req)
			if err != nil {
				return false, err
			}
			if n := len(resp.(*kmsg.MetadataResponse).Brokers); n != len(s.nodes) {
				return false, fmt.Errorf("node %d lists %d brokers", id, n)
			}
		}
		return true, nil
	})
	return err
}

// fullISR reports whether st has every replica in its ISR and a leader.
func fullISR(st partState) bool {
	if st.leader < 0 || len(st.isr) != len(st.replicas) {
		return false
	}
	for _, r := range st.replicas {
		if !slices.Contains(st.isr, r) {
			return false
		}
	}
	return true
}
