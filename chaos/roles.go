package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTopic is the controller quorum's log, as DescribeQuorum names
// it (Kafka: KIP-595).
const metadataTopic = "__cluster_metadata"

// BindClient makes a client's connections leave from host: on one
// machine with a node on each loopback address, a client that does not
// bind takes 127.0.0.1, node 1's address, as its source, and a cut of
// node 1's links would cut the client too.
func BindClient(host string) kgo.Opt {
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(host)}}
	return kgo.Dialer(d.DialContext)
}

// Roles asks a cluster, over the Kafka protocol, where its roles are:
// which node leads a partition, which is the active controller, and
// whether every replica of a topic is in sync. It holds one client per
// node (each asks its own node only) and one over all of them. Node
// ids are 1-based, as brokers number them; NodeIndex turns one into an
// index of the brokers given to NewRoles. Roles is safe for concurrent
// use.
type Roles struct {
	all   *kgo.Client
	nodes []*kgo.Client
}

// NewRoles makes clients for the nodes at brokers (node i+1 at
// brokers[i]), each with opts.
func NewRoles(brokers []string, opts ...kgo.Opt) (*Roles, error) {
	r := &Roles{}
	all, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("chaos: roles client: %w", err)
	}
	r.all = all
	for _, b := range brokers {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b)}, opts...)...)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("chaos: roles client for %s: %w", b, err)
		}
		r.nodes = append(r.nodes, cl)
	}
	return r, nil
}

// Close closes every client.
func (r *Roles) Close() {
	r.all.Close()
	for _, cl := range r.nodes {
		cl.Close()
	}
}

// NodeIndex is the index of node id among the brokers given to
// NewRoles, or an error for an id that is not one of them.
func (r *Roles) NodeIndex(id int32) (int, error) {
	if id < 1 || int(id) > len(r.nodes) {
		return 0, fmt.Errorf("chaos: node id %d is not one of %d nodes", id, len(r.nodes))
	}
	return int(id) - 1, nil
}

// ActiveController is the node id of the controller quorum's leader,
// from DescribeQuorum (API 55), which any broker forwards to the
// active controller.
func (r *Roles) ActiveController(ctx context.Context) (int32, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	t := kmsg.NewDescribeQuorumRequestTopic()
	t.Topic = metadataTopic
	t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, r.all)
	if err != nil {
		return 0, fmt.Errorf("chaos: DescribeQuorum: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, fmt.Errorf("chaos: DescribeQuorum: %w", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, errors.New("chaos: DescribeQuorum: no partition of " + metadataTopic + " in the response")
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return 0, fmt.Errorf("chaos: DescribeQuorum: %w", err)
	}
	if p.LeaderID < 0 {
		return 0, errors.New("chaos: DescribeQuorum: the quorum has no leader")
	}
	return p.LeaderID, nil
}

// PartitionState is one partition as one node's Metadata shows it.
type PartitionState struct {
	Leader   int32
	Epoch    int32
	Replicas []int32
	ISR      []int32
}

// Partitions is topic's partitions as node index i's Metadata shows
// them (each node answers from its own copy of the metadata image).
func (r *Roles) Partitions(ctx context.Context, i int, topic string) (map[int32]PartitionState, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	seeds := r.nodes[i].SeedBrokers()
	if len(seeds) != 1 {
		return nil, fmt.Errorf("chaos: node index %d: %d seed brokers", i, len(seeds))
	}
	kresp, err := seeds[0].Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("chaos: Metadata from node index %d: %w", i, err)
	}
	resp := kresp.(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 {
		return nil, fmt.Errorf("chaos: Metadata from node index %d: %d topics", i, len(resp.Topics))
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return nil, fmt.Errorf("chaos: Metadata of %s from node index %d: %w", topic, i, err)
	}
	out := map[int32]PartitionState{}
	for _, p := range resp.Topics[0].Partitions {
		out[p.Partition] = PartitionState{Leader: p.Leader, Epoch: p.LeaderEpoch, Replicas: p.Replicas, ISR: p.ISR}
	}
	return out, nil
}

// Leader is the node id leading partition p of topic, as the first
// node that answers says.
func (r *Roles) Leader(ctx context.Context, topic string, p int32) (int32, error) {
	var errs []error
	for i := range r.nodes {
		ps, err := r.Partitions(ctx, i, topic)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s, ok := ps[p]; ok && s.Leader >= 0 {
			return s.Leader, nil
		}
		errs = append(errs, fmt.Errorf("node index %d: partition %d of %s has no leader", i, p, topic))
	}
	return 0, errors.Join(errs...)
}

// FullISR returns nil once every node's metadata shows every partition
// of topic (want of them) with a leader and every replica in its ISR,
// polling until ctx ends; then it says which partitions were short.
func (r *Roles) FullISR(ctx context.Context, topic string, want int) error {
	for {
		short := r.shortPartitions(ctx, topic, want)
		if len(short) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: ISRs of %s not full: %s: %w", topic, strings.Join(short, "; "), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// shortPartitions describes what keeps topic's ISRs from being full
// on any node, or nothing.
func (r *Roles) shortPartitions(ctx context.Context, topic string, want int) []string {
	var short []string
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for i := range r.nodes {
		ps, err := r.Partitions(qctx, i, topic)
		if err != nil {
			short = append(short, err.Error())
			continue
		}
		if len(ps) != want {
			short = append(short, fmt.Sprintf("node index %d sees %d partitions, want %d", i, len(ps), want))
		}
		for _, p := range slices.Sorted(maps.Keys(ps)) {
			s := ps[p]
			if s.Leader < 0 || len(s.ISR) < len(s.Replicas) {
				short = append(short, fmt.Sprintf("node index %d: partition %d leader %d epoch %d replicas %v isr %v",
					i, p, s.Leader, s.Epoch, s.Replicas, s.ISR))
			}
		}
	}
	return short
}

// Reassign asks node index i to move partition p of topic to replicas
// (AlterPartitionReassignments, API 45; Kafka: KIP-455). Asking the
// active controller's node itself needs no forwarding between nodes,
// which a cut may stop.
func (r *Roles) Reassign(ctx context.Context, i int, topic string, p int32, replicas []int32) error {
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = 5000
	t := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	t.Topic = topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = p, replicas
	t.Partitions = append(t.Partitions, rp)
	req.Topics = append(req.Topics, t)
	kresp, err := r.requestNode(ctx, i, req)
	if err != nil {
		return fmt.Errorf("chaos: AlterPartitionReassignments: %w", err)
	}
	resp := kresp.(*kmsg.AlterPartitionAssignmentsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("chaos: AlterPartitionReassignments: %w", err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return fmt.Errorf("chaos: AlterPartitionReassignments of %s-%d: %w", topic, rp.Partition, err)
			}
		}
	}
	return nil
}

// Reassigning is partition p of topic's reassignment in progress, as
// node index i answers ListPartitionReassignments (API 46): its adding
// and removing replicas, and false when none is in progress.
func (r *Roles) Reassigning(ctx context.Context, i int, topic string, p int32) (adding, removing []int32, ok bool, err error) {
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = 5000
	t := kmsg.NewListPartitionReassignmentsRequestTopic()
	t.Topic, t.Partitions = topic, []int32{p}
	req.Topics = append(req.Topics, t)
	kresp, err := r.requestNode(ctx, i, req)
	if err != nil {
		return nil, nil, false, fmt.Errorf("chaos: ListPartitionReassignments: %w", err)
	}
	resp := kresp.(*kmsg.ListPartitionReassignmentsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, nil, false, fmt.Errorf("chaos: ListPartitionReassignments: %w", err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.Topic == topic && rp.Partition == p {
				return rp.AddingReplicas, rp.RemovingReplicas, true, nil
			}
		}
	}
	return nil, nil, false, nil
}

// requestNode sends req to node index i alone.
func (r *Roles) requestNode(ctx context.Context, i int, req kmsg.Request) (kmsg.Response, error) {
	if i < 0 || i >= len(r.nodes) {
		return nil, fmt.Errorf("chaos: no node index %d", i)
	}
	seeds := r.nodes[i].SeedBrokers()
	if len(seeds) != 1 {
		return nil, fmt.Errorf("chaos: node index %d: %d seed brokers", i, len(seeds))
	}
	return seeds[0].Request(ctx, req)
}

// ElectPreferred asks for preferred-replica elections of every
// partition of topic (ElectLeaders, API 43; Kafka: KIP-183), as
// kafka-leader-election.sh --election-type preferred does: leadership
// goes back to each partition's first replica where it is in sync.
// Partitions (of partitions) already led by it, or whose preferred
// replica is not in sync, are not errors.
func (r *Roles) ElectPreferred(ctx context.Context, topic string, partitions int32) error {
	var set kadm.TopicsSet
	for p := range partitions {
		set.Add(topic, p)
	}
	res, err := kadm.NewClient(r.all).ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		return fmt.Errorf("chaos: ElectLeaders: %w", err)
	}
	for _, pr := range res[topic] {
		if pr.Err != nil && !errors.Is(pr.Err, kerr.ElectionNotNeeded) && !errors.Is(pr.Err, kerr.PreferredLeaderNotAvailable) {
			return fmt.Errorf("chaos: ElectLeaders of %s-%d: %w", topic, pr.Partition, pr.Err)
		}
	}
	return nil
}
