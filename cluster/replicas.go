package cluster

// The broker's side of replication (Kafka's ReplicaManager.applyDelta):
// one goroutine follows the metadata publisher and applies each image's
// partition states to the replicas: a partition assigned here gets its
// log (created when missing) and becomes leader or follower with the
// image's leader, epochs, ISR and replicas; a follower's fetcher is
// added or moved; a partition no longer assigned here, or whose topic
// left the image, is stopped and deleted. AlterPartition goes to the
// active controller through ControllerClient.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/metadata"
	"github.com/varve/varve/quorum"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

// ControllerClient reaches the active controller (quorum.Client does).
type ControllerClient interface {
	Do(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// LeadershipListener is told when this node gains or loses the
// leadership of a partition (the group coordinator loads or unloads
// __consumer_offsets partitions on it).
type LeadershipListener func(topic string, partition int32, isLeader bool, leaderEpoch int32)

// replication is the broker's replication wiring.
type replication struct {
	mu         sync.Mutex
	controller ControllerClient
	listener   LeadershipListener
	prev       *metadata.Image                // the last image applied
	applied    atomic.Pointer[metadata.Image] // prev, for readers outside the applying goroutine
	// retry holds the topics of prev some of whose partitions were not
	// applied (a failed creation or role change, a replica of an older
	// topic of the same name still being deleted): the next image
	// applies them again even if they did not change.
	retry map[metadata.TopicID]bool
	// visited counts the partitions the last application looked at.
	visited int
	client  *replicaClient
	// lifecycle is the broker's registration on a cluster node, set once
	// it starts; registered is set once an image holds the registration
	// of this process (see registeredIn).
	lifecycle  atomic.Pointer[quorum.Lifecycle]
	registered atomic.Bool
}

// SetControllerClient gives the broker its way to the active controller
// for AlterPartition; without one (a single node) ISR changes are not
// sent. Call it before Start.
func (b *Broker) SetControllerClient(c ControllerClient) {
	b.repl.mu.Lock()
	defer b.repl.mu.Unlock()
	b.repl.controller = c
}

// OnLeadershipChange registers the listener of this node's leadership
// changes. Call it before Start.
func (b *Broker) OnLeadershipChange(f LeadershipListener) {
	b.repl.mu.Lock()
	defer b.repl.mu.Unlock()
	b.repl.listener = f
}

// replicationConfig is the replica manager's configuration from the
// broker's replica.* properties.
func (b *Broker) replicationConfig() replica.ManagerConfig {
	c := b.cfg
	return replica.ManagerConfig{
		NodeID:              b.nodeID,
		ReplicaLagTimeMaxMs: int64(c.ReplicaLagTimeMaxMs),
		MinInsyncReplicas:   func(topic string) int { return b.topicConfig(topic).MinInsyncReplicas() },
		Fetch: replica.FetcherConfig{
			NumFetchers: c.NumReplicaFetchers, MaxBytes: int32(c.ReplicaFetchMaxBytes),
			ResponseMaxBytes: int32(c.ReplicaFetchResponseMaxBytes), MaxWait: c.ReplicaFetchWaitMaxMs.Duration(),
			MinBytes: int32(c.ReplicaFetchMinBytes), Backoff: c.ReplicaFetchBackoffMs.Duration(),
			BrokerEpoch: b.brokerEpoch,
		},
		Quota: replica.QuotaConfig{Samples: c.ReplicationQuotaWindowNum,
			Window: time.Duration(c.ReplicationQuotaWindowSizeSeconds) * time.Second},
		Logf: b.log.Debug,
	}
}

// brokerEpoch is this broker's epoch in the current image (-1 unknown).
func (b *Broker) brokerEpoch() int64 {
	if br, ok := b.meta.image().Broker(b.nodeID); ok {
		return br.Epoch
	}
	return -1
}

// startReplication applies the current image at once (before any
// listener serves; on a cluster node, not before the image holds this
// process's registration: registeredIn), then starts the replica manager's loops and the
// goroutine that follows the publisher.
func (b *Broker) startReplication() {
	b.repl.mu.Lock()
	b.repl.client = newReplicaClient(b)
	var sender replica.AlterPartitionSender
	if b.repl.controller != nil {
		sender = alterPartitionSender{b: b, c: b.repl.controller}
	}
	b.repl.mu.Unlock()
	ch := b.meta.pub.Wait()
	b.setReplicationRates(b.effectiveConfig())
	b.applyImage(b.meta.pub.Image())
	b.parts.Start(sender, b.repl.client)
	b.bg.Add(1)
	go func() {
		defer b.bg.Done()
		b.followImages(ch)
	}()
}

// stopReplication closes the fetchers' idle connections (the replica
// manager has stopped its loops).
func (b *Broker) stopReplication() {
	b.repl.mu.Lock()
	c := b.repl.client
	b.repl.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// followImages applies every image the publisher publishes (coalesced:
// the newest when this loop gets to it) until the broker stops.
func (b *Broker) followImages(ch <-chan struct{}) {
	for {
		select {
		case <-b.stopImages:
			return
		case <-ch:
		}
		ch = b.meta.pub.Wait()
		b.applyImage(b.meta.pub.Image())
	}
}

// applyImage is Kafka's ReplicaManager.applyDelta: it applies what
// changed between the last image applied and img. Images share every
// topic a change leaves alone (metadata.Apply is copy-on-write per
// topic), so a topic whose pointer is the previous image's is skipped
// without looking at its partitions, unless an earlier application of
// it failed; the first image (and one restored from a snapshot, which
// shares nothing) is applied whole.
func (b *Broker) applyImage(img *metadata.Image) {
	if !b.registeredIn(img) {
		return
	}
	var ineligible []int32 // Kafka's isReplicaIsrEligible: fenced or shutting down
	for _, br := range img.Brokers() {
		if br.Fenced || br.InControlledShutdown {
			ineligible = append(ineligible, br.ID)
		}
	}
	b.parts.SetIneligibleReplicas(ineligible)
	prev, retry := b.repl.prev, map[metadata.TopicID]bool{}
	b.repl.visited = 0
	for t := range img.Topics() {
		if prev != nil && !b.repl.retry[t.ID] {
			if pt, ok := prev.TopicByID(t.ID); ok && pt == t {
				continue // unchanged since the last image applied
			}
		}
		b.applyThrottledReplicas(t)
		if !b.applyTopic(t) {
			retry[t.ID] = true
		}
	}
	if prev != nil {
		for t := range prev.Topics() {
			if _, ok := img.TopicByID(t.ID); !ok {
				b.removeThrottledReplicas(t.Name)
				for i := range t.Partitions {
					b.stopReplica(partitionOf(t.Name, int32(i)), t.ID)
				}
			}
		}
	}
	b.repl.prev, b.repl.retry = img, retry
	b.repl.applied.Store(img)
	b.applyDynamicConfig()
}

// registeredIn says whether this node may apply img's partition states:
// always on a single node; on a cluster node, once an image holds the
// registration this process made (its broker epoch), and from then on.
// Until then the image's leaderships and ISRs naming this node are its
// previous process's: one that did not shut down cleanly may have lost
// records it had acknowledged (an unsynced tail), and must not lead or
// count for an ISR on their strength. Its registration is refused
// (DUPLICATE_BROKER_REGISTRATION) while the old session lives; once
// accepted, the controller has fenced the old registration in the same
// log, before it (KIP-966), so the first image applied already shows
// this node out of every ISR. Kafka: BrokerServer waits for the
// lifecycle manager's initial catch-up (registered, and the metadata
// replayed up to the registration) before its replica manager applies
// any metadata.
func (b *Broker) registeredIn(img *metadata.Image) bool {
	if b.quorum == nil || b.repl.registered.Load() {
		return true
	}
	l := b.repl.lifecycle.Load()
	if l == nil {
		return false
	}
	br, ok := img.Broker(b.nodeID)
	if epoch := l.BrokerEpoch(); epoch < 0 || !ok || br.Epoch != epoch {
		return false
	}
	b.repl.registered.Store(true)
	b.log.Info("applying partition states: the metadata holds this broker's registration", "epoch", br.Epoch)
	return true
}

// applyTopic applies every partition of t; false when one of them was
// not applied.
func (b *Broker) applyTopic(t *metadata.Topic) bool {
	ok := true
	for i := range t.Partitions {
		b.repl.visited++
		tp := partitionOf(t.Name, int32(i))
		if p := &t.Partitions[i]; slices.Contains(p.Replicas, b.nodeID) {
			ok = b.applyPartition(tp, t.ID, p) && ok
		} else {
			b.stopReplica(tp, t.ID)
		}
	}
	return ok
}

// applyPartition makes this node's replica of tp what the image says;
// false when it could not (to be tried again with the next image).
func (b *Broker) applyPartition(tp segment.TopicPartition, id metadata.TopicID, ip *metadata.Partition) bool {
	part, ok := b.parts.Partition(tp)
	if ok && b.unfinishedReplica(tp, part, ip) {
		ok = false
	}
	if !ok {
		_, err := b.parts.CreatePartition(tp, replica.TopicID(id))
		if err != nil && !errors.Is(err, replica.ErrPartitionExists) {
			b.log.Error("creating a partition assigned to this node failed", "partition", tp, "err", err)
			return false
		}
		if part, ok = b.parts.Partition(tp); !ok {
			return false
		}
	}
	if part.TopicID != replica.TopicID(id) && part.TopicID != (replica.TopicID{}) {
		return false // an older topic of the same name, being deleted
	}
	s := replica.LeaderAndISR{Leader: ip.Leader, LeaderEpoch: ip.LeaderEpoch, PartitionEpoch: ip.PartitionEpoch,
		ISR: slices.Clone(ip.ISR), Replicas: slices.Clone(ip.Replicas)}
	role, cur := part.State()
	lead := s.Leader == b.nodeID
	if part.Replicated() && cur.LeaderEpoch == s.LeaderEpoch && cur.PartitionEpoch >= s.PartitionEpoch && (role == replica.RoleLeader) == lead {
		return true // nothing new for this replica
	}
	wasLeader := part.Replicated() && role == replica.RoleLeader
	var err error
	if lead {
		err = b.parts.MakeLeader(tp, s)
	} else {
		err = b.parts.MakeFollower(tp, s)
	}
	if err != nil {
		b.log.Warn("partition state from the metadata not applied", "partition", tp, "leader", s.Leader, "epoch", s.LeaderEpoch, "err", err)
		return false
	}
	if lead != wasLeader || (lead && cur.LeaderEpoch != s.LeaderEpoch) {
		b.leadershipChanged(tp, lead, s.LeaderEpoch)
	}
	return true
}

// unfinishedReplica deletes this node's replica of tp, to be created
// again, when it was loaded from a directory without partition.metadata
// (no topic id) and the partition neither is led by this node nor
// counts it in its ISR. Such a directory is one whose creation a crash
// cut short (the topic id is written just after the directory is
// made): kept, it would fetch without a topic id and be refused
// (UNKNOWN_TOPIC_ID) for ever, and a reassignment adding it would
// never complete. Out of the ISR, its records are the leader's to give
// again. Kafka assigns the topic id to such a log when it becomes
// leader or follower (Partition.checkOrSetTopicId); a replica in the
// ISR is left as it was.
func (b *Broker) unfinishedReplica(tp segment.TopicPartition, part *replica.Partition, ip *metadata.Partition) bool {
	if part.TopicID != (replica.TopicID{}) || ip.Leader == b.nodeID || slices.Contains(ip.ISR, b.nodeID) {
		return false
	}
	b.log.Warn("a replica without a topic id, out of the ISR: deleting it to fetch it again", "partition", tp)
	if err := b.parts.DeletePartition(tp); err != nil && !errors.Is(err, replica.ErrUnknownPartition) {
		b.log.Warn("deleting a replica without a topic id failed", "partition", tp, "err", err)
	}
	return true
}

func (b *Broker) leadershipChanged(tp segment.TopicPartition, lead bool, epoch int32) {
	b.repl.mu.Lock()
	f := b.repl.listener
	b.repl.mu.Unlock()
	if f != nil {
		f(tp.Topic, tp.Partition, lead, epoch)
	}
}

// stopReplica stops and deletes this node's replica of tp (Kafka's
// StopReplica with deletion) when it belongs to topic id.
func (b *Broker) stopReplica(tp segment.TopicPartition, id metadata.TopicID) {
	part, ok := b.parts.Partition(tp)
	if !ok || (part.TopicID != replica.TopicID(id) && part.TopicID != (replica.TopicID{})) {
		return
	}
	wasLeader := part.IsLeader()
	if err := b.parts.DeletePartition(tp); err != nil && !errors.Is(err, replica.ErrUnknownPartition) {
		b.log.Warn("deleting a replica no longer assigned here failed", "partition", tp, "err", err)
	}
	if wasLeader {
		b.leadershipChanged(tp, false, -1)
	}
}

// alterPartitionSender sends AlterPartition (v3: ISR with broker epochs,
// KIP-903) to the active controller.
type alterPartitionSender struct {
	b *Broker
	c ControllerClient
}

func (s alterPartitionSender) AlterPartition(ctx context.Context, items []replica.AlterPartitionItem) ([]replica.AlterPartitionResult, error) {
	img := s.b.meta.image()
	req := kmsg.NewPtrAlterPartitionRequest()
	req.SetVersion(3)
	req.BrokerID, req.BrokerEpoch = s.b.nodeID, s.b.brokerEpoch()
	byTopic := map[replica.TopicID]int{}
	names := map[replica.TopicID]string{}
	for _, it := range items {
		at, ok := byTopic[it.TopicID]
		if !ok {
			at = len(req.Topics)
			byTopic[it.TopicID], names[it.TopicID] = at, it.TP.Topic
			t := kmsg.NewAlterPartitionRequestTopic()
			t.TopicID = it.TopicID
			req.Topics = append(req.Topics, t)
		}
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = it.TP.Partition, it.LeaderEpoch, it.PartitionEpoch
		for _, id := range it.ISR {
			e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			e.BrokerID = id
			if br, ok := img.Broker(id); ok {
				e.BrokerEpoch = br.Epoch
			}
			rp.NewEpochISR = append(rp.NewEpochISR, e)
		}
		req.Topics[at].Partitions = append(req.Topics[at].Partitions, rp)
	}
	kresp, err := s.c.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, ok := kresp.(*kmsg.AlterPartitionResponse)
	if !ok {
		return nil, fmt.Errorf("AlterPartition: answered with %T", kresp)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("AlterPartition: %w", err)
	}
	var out []replica.AlterPartitionResult
	for _, t := range resp.Topics {
		name := names[t.TopidID]
		for _, p := range t.Partitions {
			if old, ok := img.Partition(name, p.Partition); ok && p.ErrorCode == 0 {
				s.b.metrics.isrChanged(old.ISR, p.ISR)
			}
			r := replica.AlterPartitionResult{TP: partitionOf(name, p.Partition), Err: kerr.ErrorForCode(p.ErrorCode)}
			r.New = replica.LeaderAndISR{Leader: p.LeaderID, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: p.ISR}
			out = append(out, r)
		}
	}
	return out, nil
}

// leaderOf is the leader the image names for a partition, with its
// epoch and client endpoint (KIP-951); ok false when it names none.
func (b *Broker) leaderOf(topic string, partition int32) (id, epoch int32, ep metadata.Endpoint, ok bool) {
	img := b.meta.image()
	p, found := img.Partition(topic, partition)
	if !found || p.Leader < 0 {
		return -1, -1, ep, false
	}
	br, found := img.Broker(p.Leader)
	if !found {
		return p.Leader, p.LeaderEpoch, ep, false
	}
	ep, ok = endpointOf(br, b.listenerName())
	return p.Leader, p.LeaderEpoch, ep, ok
}

// movedLeader says whether an error code is one after which a client
// looks for the partition's leader (KIP-951 answers it at once).
func movedLeader(code int16) bool {
	return code == kerr.NotLeaderForPartition.Code || code == kerr.FencedLeaderEpoch.Code
}

// addCurrentLeaders fills KIP-951's CurrentLeader and NodeEndpoints
// (Produce v10+) for every partition this broker does not lead.
func (b *Broker) addCurrentLeaders(version int16, resp *kmsg.ProduceResponse) {
	if version < 10 {
		return
	}
	seen := map[int32]bool{}
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		for pi := range t.Partitions {
			sp := &t.Partitions[pi]
			if !movedLeader(sp.ErrorCode) {
				continue
			}
			id, epoch, ep, ok := b.leaderOf(t.Topic, sp.Partition)
			if !ok || id == b.nodeID {
				continue
			}
			sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = id, epoch
			if !seen[id] {
				seen[id] = true
				nb := kmsg.NewProduceResponseBroker()
				nb.NodeID, nb.Host, nb.Port = id, ep.Host, ep.Port
				resp.Brokers = append(resp.Brokers, nb)
			}
		}
	}
}
