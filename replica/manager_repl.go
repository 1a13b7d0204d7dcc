package replica

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/varve/varve/segment"
)

// LeaderEpochCheckpointFile is the name of a partition directory's
// leader-epoch checkpoint (Kafka's LeaderEpochCheckpointFile).
const LeaderEpochCheckpointFile = "leader-epoch-checkpoint"

// ManagerConfig holds the replication settings of a node (Kafka's
// replica.* properties and the node's id). Zero values take Kafka's
// defaults.
type ManagerConfig struct {
	NodeID              int32
	ReplicaLagTimeMaxMs int64 // replica.lag.time.max.ms, 30000
	// MinInsyncReplicas gives a topic's min.insync.replicas; nil is 1.
	MinInsyncReplicas func(topic string) int
	// NowMs is the clock of every partition's state machine and of the
	// ISR expiration check's decisions; nil is the wall clock.
	NowMs func() int64
	// ISRCheckInterval is how often the ISR expiration check runs;
	// zero is half of replica.lag.time.max.ms, as in Kafka.
	ISRCheckInterval time.Duration
	Fetch            FetcherConfig
	// Quota sizes the samples of the leader's and the follower's
	// replication quotas (KIP-73).
	Quota QuotaConfig
	Logf  func(msg string, args ...any) // nil: silent
}

func (c ManagerConfig) withDefaults() ManagerConfig {
	if c.ReplicaLagTimeMaxMs <= 0 {
		c.ReplicaLagTimeMaxMs = 30000
	}
	if c.NowMs == nil {
		c.NowMs = wallClockMs
	}
	if c.ISRCheckInterval <= 0 {
		c.ISRCheckInterval = time.Duration(c.ReplicaLagTimeMaxMs/2) * time.Millisecond
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	c.Fetch = c.Fetch.withDefaults()
	return c
}

func (c ManagerConfig) minInsync(topic string) int {
	if c.MinInsyncReplicas == nil {
		return 1
	}
	return c.MinInsyncReplicas(topic)
}

// epochFile is a partition's leader-epoch-checkpoint, written through
// segment.WriteFileAtomic (temp, fsync, rename, fsync directory).
type epochFile struct {
	fs   segment.FS
	path string
}

func (f epochFile) Store(data []byte) error { return segment.WriteFileAtomic(f.fs, f.path, data) }

// loadEpochs reads a partition's leader-epoch-checkpoint. A missing file
// is an empty cache; one that does not parse is too (Kafka rebuilds the
// cache; the next leadership or replicated epoch fills it again).
func (f epochFile) load() *EpochCache {
	data, err := segment.ReadFile(f.fs, f.path)
	if err != nil {
		return &EpochCache{}
	}
	c, err := UnmarshalEpochCheckpoint(data)
	if err != nil {
		return &EpochCache{}
	}
	return c
}

// configure gives a new partition its replication settings, its epoch
// cache from dir's checkpoint, and the AlterPartition sender's kick.
func (m *Manager) configure(p *Partition, dir string, checkpointedHW int64) {
	ef := epochFile{fs: m.fs, path: filepath.Join(dir, LeaderEpochCheckpointFile)}
	tp := p.TP
	p.Configure(PartitionOptions{
		Config: ReplicationConfig{LocalID: m.rc.NodeID, MinInsyncReplicas: m.rc.minInsync(tp.Topic),
			ReplicaLagTimeMaxMs: m.rc.ReplicaLagTimeMaxMs},
		Epochs: ef.load(), Store: ef, RestoredHW: checkpointedHW, NowMs: m.rc.NowMs,
		AlterReady: func() { m.bg.alterReady(tp) },
	})
}

// MakeLeader makes this node tp's leader as the controller decided, and
// stops fetching it.
func (m *Manager) MakeLeader(tp segment.TopicPartition, s LeaderAndISR) error {
	p, ok := m.Partition(tp)
	if !ok {
		return fmt.Errorf("%s: %w", tp, ErrUnknownPartition)
	}
	m.bg.unfollow(tp)
	if err := p.MakeLeader(s, m.rc.NowMs()); err != nil {
		return err
	}
	m.bg.mu.Lock()
	ineligible := m.bg.ineligible
	m.bg.mu.Unlock()
	if len(ineligible) > 0 {
		p.SetIneligible(ineligible)
	}
	return nil
}

// SetIneligibleReplicas names the brokers that may not join any ISR
// (fenced, in controlled shutdown: the metadata says so) and tells every
// partition this node leads.
func (m *Manager) SetIneligibleReplicas(ids []int32) {
	m.bg.mu.Lock()
	same := slices.Equal(m.bg.ineligible, ids)
	m.bg.ineligible = slices.Clone(ids)
	m.bg.mu.Unlock()
	if same {
		return
	}
	for _, p := range *m.parts.Load() {
		if p.Replicated() && p.IsLeader() {
			p.SetIneligible(ids)
		}
	}
}

// MakeFollower makes this node follow s.Leader for tp and has a fetcher
// replicate it from there.
func (m *Manager) MakeFollower(tp segment.TopicPartition, s LeaderAndISR) error {
	p, ok := m.Partition(tp)
	if !ok {
		return fmt.Errorf("%s: %w", tp, ErrUnknownPartition)
	}
	if err := p.MakeFollower(s); err != nil {
		return err
	}
	if s.Leader >= 0 {
		m.bg.follow(p, s.Leader)
	} else {
		m.bg.unfollow(tp)
	}
	return nil
}

// AlterPartitionItem is one partition's AlterPartition.
type AlterPartitionItem struct {
	TP      segment.TopicPartition
	TopicID TopicID
	AlterPartition
}

// AlterPartitionResult is the controller's answer for one partition:
// the new state, or an error (Kafka's AlterPartition error codes).
type AlterPartitionResult struct {
	TP  segment.TopicPartition
	New LeaderAndISR
	Err error
}

// AlterPartitionSender sends ISR changes to the active controller. The
// broker implements it with AlterPartition requests; an error means no
// answer came (every item is sent again later).
type AlterPartitionSender interface {
	AlterPartition(ctx context.Context, items []AlterPartitionItem) ([]AlterPartitionResult, error)
}

// LeaderQuota is the node's leader replication quota: it bounds what
// this node serves to the followers of its throttled replicas.
func (m *Manager) LeaderQuota() *ReplicationQuota { return m.leaderQuota }

// FollowerQuota is the node's follower replication quota: it bounds
// what this node fetches for its throttled replicas.
func (m *Manager) FollowerQuota() *ReplicationQuota { return m.followerQuota }

// Start runs the node's replication: the ISR expiration check, the
// AlterPartition sender over sender, and follower fetchers over ep.
// Either may be nil (a single node has nothing to send or fetch).
func (m *Manager) Start(sender AlterPartitionSender, ep LeaderEndpoint) {
	m.bg.start(sender, ep)
}

// background is the Manager's replication goroutines: the ISR check,
// the AlterPartition sender, and the fetchers.
type background struct {
	m      *Manager
	sender AlterPartitionSender
	ep     LeaderEndpoint
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}

	mu       sync.Mutex
	started  bool
	pending  map[segment.TopicPartition]struct{} // have an AlterPartition ready
	fetchers map[fetcherKey]*fetcher
	followed map[segment.TopicPartition]fetcherKey

	ineligible []int32 // brokers that may not join an ISR
}

func (b *background) init(m *Manager) {
	b.m = m
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.kick = make(chan struct{}, 1)
	b.pending = map[segment.TopicPartition]struct{}{}
	b.fetchers = map[fetcherKey]*fetcher{}
	b.followed = map[segment.TopicPartition]fetcherKey{}
}

func (b *background) start(sender AlterPartitionSender, ep LeaderEndpoint) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started {
		return
	}
	b.sender, b.ep, b.started = sender, ep, true
	b.wg.Add(2)
	go b.isrLoop()
	go b.alterLoop()
	for _, f := range b.fetchers {
		b.runFetcher(f)
	}
}

func (b *background) stop() {
	b.cancel()
	b.wg.Wait()
}

func (b *background) alterReady(tp segment.TopicPartition) {
	b.mu.Lock()
	b.pending[tp] = struct{}{}
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// isrLoop is Kafka's isr-expiration task.
func (b *background) isrLoop() {
	defer b.wg.Done()
	t := time.NewTicker(b.m.rc.ISRCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
			b.m.CheckISR()
		}
	}
}

// CheckISR runs the ISR expiration check on every partition now (the
// background loop does every half of replica.lag.time.max.ms).
func (m *Manager) CheckISR() {
	now := m.rc.NowMs()
	for _, p := range *m.parts.Load() {
		p.Tick(now)
	}
}

// alterLoop sends the AlterPartitions that are ready, one request for
// all of them, and feeds the answers back; unanswered ones go again
// after replica.fetch.backoff.ms.
func (b *background) alterLoop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.kick:
		}
		if b.sender == nil {
			continue
		}
		if retry := b.m.SendAlterPartitions(b.ctx, b.sender); retry {
			select {
			case <-b.ctx.Done():
				return
			case <-time.After(b.m.rc.Fetch.Backoff):
			}
			select {
			case b.kick <- struct{}{}:
			default:
			}
		}
	}
}

// SendAlterPartitions sends every AlterPartition ready through sender
// and applies the answers; it reports whether some must be sent again.
func (m *Manager) SendAlterPartitions(ctx context.Context, sender AlterPartitionSender) (retry bool) {
	b := &m.bg
	b.mu.Lock()
	tps := b.pending
	b.pending = map[segment.TopicPartition]struct{}{}
	b.mu.Unlock()
	var items []AlterPartitionItem
	for tp := range tps {
		if p, ok := m.Partition(tp); ok {
			if a, ok := p.TakeAlterPartition(); ok {
				items = append(items, AlterPartitionItem{TP: tp, TopicID: p.TopicID, AlterPartition: a})
			}
		}
	}
	if len(items) == 0 {
		return false
	}
	results, err := sender.AlterPartition(ctx, items)
	now := m.rc.NowMs()
	if err != nil {
		m.rc.Logf("AlterPartition failed", "partitions", len(items), "err", err)
		for _, it := range items {
			if p, ok := m.Partition(it.TP); ok {
				p.HandleAlterPartitionResponse(LeaderAndISR{}, err, now) // sent again
			}
		}
		return true
	}
	answered := map[segment.TopicPartition]bool{}
	for _, r := range results {
		answered[r.TP] = true
		if p, ok := m.Partition(r.TP); ok {
			p.HandleAlterPartitionResponse(r.New, r.Err, now)
		}
	}
	for _, it := range items {
		if p, ok := m.Partition(it.TP); ok && !answered[it.TP] {
			p.HandleAlterPartitionResponse(LeaderAndISR{}, errNoAnswer, now)
			retry = true
		}
	}
	return retry
}

// errNoAnswer: the controller's response left a partition out; its
// AlterPartition is sent again.
var errNoAnswer = errors.New("AlterPartition: the partition was not answered")
