package replica

import (
	"cmp"
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/fetchsession"
	"github.com/varve/varve/segment"
)

// Follower fetchers (Kafka's ReplicaFetcherManager and
// AbstractFetcherThread): num.replica.fetchers loops per source broker,
// each sending one Fetch for every partition it follows from that
// leader, applying each partition's answer to its Partition. Each loop
// keeps a fetch session with its leader (KIP-227): once the leader
// gives it one, a request names only the partitions whose fetch offset
// or epochs changed (and those it no longer follows, as forgotten), and
// the answer only the partitions with something new.

// FetcherConfig holds the follower fetchers' settings, Kafka's replica.*
// properties; zero values take Kafka's defaults.
type FetcherConfig struct {
	NumFetchers      int           // num.replica.fetchers, 1
	MaxBytes         int32         // replica.fetch.max.bytes, 1 MiB (per partition)
	ResponseMaxBytes int32         // replica.fetch.response.max.bytes, 10 MiB
	MaxWait          time.Duration // replica.fetch.wait.max.ms, 500 ms
	MinBytes         int32         // replica.fetch.min.bytes, 1
	Backoff          time.Duration // replica.fetch.backoff.ms, 1 s
	// BrokerEpoch is this node's broker epoch, sent in ReplicaState
	// (Fetch v15+); nil is -1.
	BrokerEpoch func() int64
}

func (c FetcherConfig) withDefaults() FetcherConfig {
	if c.NumFetchers <= 0 {
		c.NumFetchers = 1
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 1 << 20
	}
	if c.ResponseMaxBytes <= 0 {
		c.ResponseMaxBytes = 10 << 20
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 500 * time.Millisecond
	}
	if c.MinBytes <= 0 {
		c.MinBytes = 1
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.BrokerEpoch == nil {
		c.BrokerEpoch = func() int64 { return -1 }
	}
	return c
}

// ReplicaFetch is one Fetch a follower sends its leader.
type ReplicaFetch struct {
	ReplicaID    int32
	ReplicaEpoch int64
	MaxWait      time.Duration
	MinBytes     int32
	MaxBytes     int32
	// SessionID and SessionEpoch are the fetch session's (KIP-227): 0
	// and 0 ask for a full fetch that opens one.
	SessionID, SessionEpoch int32
	// Partitions are all the partitions followed (a full fetch) or those
	// whose fetch changed (an incremental one).
	Partitions []ReplicaFetchPartition
	Forgotten  []ReplicaFetchKey // partitions the session drops
}

// ReplicaFetchKey names a partition leaving a fetch session.
type ReplicaFetchKey struct {
	TP      segment.TopicPartition
	TopicID TopicID
}

// ReplicaFetchResponse is the leader's answer to a ReplicaFetch: a
// session error (ErrorCode, no partitions), or the session id and the
// partitions answered (all of a full fetch's; an incremental one's with
// something new).
type ReplicaFetchResponse struct {
	ErrorCode  int16
	SessionID  int32
	Partitions []ReplicaFetchResult
}

// ReplicaFetchPartition is one partition of a ReplicaFetch.
type ReplicaFetchPartition struct {
	TP                 segment.TopicPartition
	TopicID            TopicID
	FetchOffset        int64
	LastFetchedEpoch   int32
	CurrentLeaderEpoch int32
	LogStartOffset     int64
	MaxBytes           int32
}

// ReplicaFetchResult is the leader's answer for one partition (its
// error decoded from the error code).
type ReplicaFetchResult struct {
	TP segment.TopicPartition
	FetchResponse
}

// LeaderEndpoint sends a follower's fetch to broker leader and returns
// its per-partition answers, records included (Kafka's LeaderEndpoint).
// An error means no answer (the connection failed): the fetcher backs
// off and tries again.
type LeaderEndpoint interface {
	Fetch(ctx context.Context, leader int32, req ReplicaFetch) (ReplicaFetchResponse, error)
}

type fetcherKey struct {
	leader int32
	id     int
}

// fetcher is one fetch loop towards one leader.
type fetcher struct {
	key     fetcherKey
	mu      sync.Mutex
	parts   map[segment.TopicPartition]*Partition
	changed chan struct{} // a partition was added
	cancel  context.CancelFunc
	running bool
	session fetchsession.Handler // owned by the fetch loop
	// lag is each partition's distance to the leader's high watermark
	// after its last answer with records (absent: unknown); owned by
	// the fetch loop.
	lag map[segment.TopicPartition]fetchLag
}

func fetcherID(tp segment.TopicPartition, n int) int {
	h := fnv.New32a()
	h.Write([]byte(tp.Topic))
	return int((h.Sum32() + uint32(tp.Partition)) % uint32(n))
}

// follow has a fetcher of leader replicate p, removing it from any other.
func (b *background) follow(p *Partition, leader int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := fetcherKey{leader, fetcherID(p.TP, b.fetchConfig().NumFetchers)}
	if old, ok := b.followed[p.TP]; ok && old != key {
		b.removeLocked(p.TP, old)
	}
	f := b.fetchers[key]
	if f == nil {
		f = &fetcher{key: key, parts: map[segment.TopicPartition]*Partition{}, changed: make(chan struct{}, 1)}
		b.fetchers[key] = f
	}
	b.followed[p.TP] = key
	f.mu.Lock()
	f.parts[p.TP] = p
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
	if b.started {
		b.runFetcher(f)
	}
}

func (b *background) fetchConfig() FetcherConfig { return b.m.rc.Fetch }

// unfollow stops fetching tp.
func (b *background) unfollow(tp segment.TopicPartition) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if key, ok := b.followed[tp]; ok {
		b.removeLocked(tp, key)
	}
}

// removeLocked takes tp from its fetcher, and stops a fetcher left with
// nothing to fetch. REQUIRES b.mu.
func (b *background) removeLocked(tp segment.TopicPartition, key fetcherKey) {
	delete(b.followed, tp)
	f := b.fetchers[key]
	if f == nil {
		return
	}
	f.mu.Lock()
	delete(f.parts, tp)
	empty := len(f.parts) == 0
	f.mu.Unlock()
	if empty {
		delete(b.fetchers, key)
		if f.cancel != nil {
			f.cancel()
		}
	}
}

// runFetcher starts f's loop unless it runs. REQUIRES b.mu.
func (b *background) runFetcher(f *fetcher) {
	if f.running || b.ep == nil {
		return
	}
	ctx, cancel := context.WithCancel(b.ctx)
	f.cancel, f.running = cancel, true
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.fetchLoop(ctx, f)
	}()
}

// fetchLoop is AbstractFetcherThread.doWork: fetch, apply, repeat; back
// off after a failed request or when no partition is fetchable.
func (b *background) fetchLoop(ctx context.Context, f *fetcher) {
	cfg := b.fetchConfig()
	for ctx.Err() == nil {
		req, parts := b.buildFetch(f, cfg)
		if len(parts) == 0 && req.SessionID == fetchsession.InvalidSessionID {
			select {
			case <-ctx.Done():
			case <-f.changed:
			case <-time.After(cfg.Backoff):
			}
			continue
		}
		resp, err := b.ep.Fetch(ctx, f.key.leader, req)
		if ctx.Err() != nil {
			return // the fetcher was stopped: its answers are not to be applied
		}
		if err != nil {
			f.session.HandleError()
			b.m.rc.Logf("replica fetch failed", "leader", f.key.leader, "err", err)
			sleep(ctx, cfg.Backoff)
			continue
		}
		if !f.session.HandleResponse(resp.ErrorCode, resp.SessionID) {
			b.m.rc.Logf("replica fetch session refused", "leader", f.key.leader, "code", resp.ErrorCode)
			continue // the next fetch is a full one
		}
		switch b.applyFetch(f, parts, resp.Partitions) {
		case fetchFailed:
			sleep(ctx, cfg.Backoff)
		case fetchLeaderBehind:
			// The leader has not applied the metadata that makes it
			// leader of this epoch yet (it answers NOT_LEADER_OR_FOLLOWER
			// or UNKNOWN_LEADER_EPOCH): it will within milliseconds, and
			// a full replica.fetch.backoff.ms here would hold every
			// acks=all produce on the new leader that long after a
			// failover. Kafka waits the full backoff; we retry soon.
			sleep(ctx, min(cfg.Backoff, leaderBehindBackoff))
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// buildFetch makes the fetch of every partition f follows, through its
// session: the returned map holds every partition the leader may
// answer, whether the request names it or not.
func (b *background) buildFetch(f *fetcher, cfg FetcherConfig) (ReplicaFetch, map[segment.TopicPartition]asked) {
	req := ReplicaFetch{ReplicaID: b.m.rc.NodeID, ReplicaEpoch: cfg.BrokerEpoch(), MaxWait: cfg.MaxWait,
		MinBytes: cfg.MinBytes, MaxBytes: cfg.ResponseMaxBytes}
	f.mu.Lock()
	parts := make([]*Partition, 0, len(f.parts))
	for _, p := range f.parts {
		parts = append(parts, p)
	}
	f.mu.Unlock()
	slices.SortFunc(parts, func(a, b *Partition) int {
		return cmp.Or(cmp.Compare(a.TP.Topic, b.TP.Topic), cmp.Compare(a.TP.Partition, b.TP.Partition))
	})
	out := make(map[segment.TopicPartition]asked, len(parts))
	byKey := make(map[fetchsession.Key]*Partition, len(parts))
	want := make([]fetchsession.Partition, 0, len(parts))
	for _, p := range parts {
		fr, ok := p.NextFetch()
		if !ok || b.followerHoldsBack(f, p.TP, fr.CurrentLeaderEpoch) {
			continue
		}
		out[p.TP] = asked{p, fr}
		k := fetchsession.Key{TopicID: p.TopicID, Topic: p.TP.Topic, Partition: p.TP.Partition}
		byKey[k] = p
		want = append(want, fetchsession.Partition{Key: k, Params: fetchsession.Params{FetchOffset: fr.FetchOffset,
			LogStartOffset: p.StartOffset(), MaxBytes: cfg.MaxBytes, CurrentLeaderEpoch: fr.CurrentLeaderEpoch,
			LastFetchedEpoch: fr.LastFetchedEpoch}})
	}
	f.pruneLag(parts)
	built := f.session.Build(want)
	req.SessionID, req.SessionEpoch = built.SessionID, built.Epoch
	for _, sp := range built.Partitions {
		req.Partitions = append(req.Partitions, ReplicaFetchPartition{TP: byKey[sp.Key].TP, TopicID: sp.TopicID,
			FetchOffset: sp.FetchOffset, LastFetchedEpoch: sp.LastFetchedEpoch, CurrentLeaderEpoch: sp.CurrentLeaderEpoch,
			LogStartOffset: sp.LogStartOffset, MaxBytes: sp.MaxBytes})
	}
	for _, k := range built.Forgotten {
		req.Forgotten = append(req.Forgotten, ReplicaFetchKey{TP: segment.TopicPartition{Topic: k.Topic, Partition: k.Partition}, TopicID: k.TopicID})
	}
	return req, out
}

// asked is a partition of a fetch in flight and what it asked.
type asked struct {
	p   *Partition
	req FetchRequest
}

// leaderBehindBackoff is how soon a follower asks again a leader whose
// metadata lags its own (see fetchLoop).
const leaderBehindBackoff = 20 * time.Millisecond

// fetchOutcome is how a round of answers went.
type fetchOutcome int

const (
	fetchApplied      fetchOutcome = iota
	fetchLeaderBehind              // only answers saying the leader does not know it leads yet
	fetchFailed                    // some other error: back off, as Kafka delays failed partitions
)

// applyFetch hands each partition its answer and says how the round went.
func (b *background) applyFetch(f *fetcher, parts map[segment.TopicPartition]asked, results []ReplicaFetchResult) fetchOutcome {
	out := fetchApplied
	for _, r := range results {
		a, ok := parts[r.TP]
		if !ok {
			continue
		}
		err := a.p.HandleFetchResponseTo(a.req, r.FetchResponse)
		b.accountFetched(f, a.p, a.req, r.FetchResponse, err)
		if err != nil {
			b.m.rc.Logf("replica fetch answer not applied", "partition", r.TP.String(), "err", err)
			if errors.Is(err, kerr.NotLeaderForPartition) || errors.Is(err, kerr.UnknownLeaderEpoch) {
				out = max(out, fetchLeaderBehind)
			} else {
				out = fetchFailed
			}
		}
	}
	return out
}
