package cluster

// Fetch, versions 0-17.
//
// Record data leaves as file regions (sendfile): the response is encoded
// by hand around them (fetch_encode.go), so the records never pass
// through user space. A fetch that has less than min.bytes waits, up to
// max.wait.ms, in the broker's purgatory (replica.DelayedFetch, Kafka's):
// no goroutine waits for it; the append, high-watermark advance or
// deletion that satisfies it builds and sends its response, or the
// purgatory's reaper does at max.wait.ms. A partition named twice in one
// request is answered once (Kafka's collapse, see resolveFetch). Limits: each
// partition's PartitionMaxBytes and the response's MaxBytes; the first
// partition with data returns at least one whole batch (KIP-74). Reads
// stop at the high watermark; from v4 every partition reports its last
// stable offset, and a read_committed consumer (IsolationLevel 1, KIP-98)
// reads only below it and gets the aborted transactions of the range
// (producer id and first offset), so that it drops their records; a
// read_uncommitted one gets null there. Topic ids replace names from v13.
//
// Versions 0-3 predate v2 batches: their records are down-converted to
// magic 0 (v0-1) or magic 1 (v2-3) message sets (fetch_legacy.go), which
// costs a copy, as it does in Kafka.
//
// A follower's fetch is recognised by its replica id (ReplicaState from
// v15, ReplicaID before; never by client id): it reads up to the log end
// rather than the high watermark, from the same file-region path,
// updates the follower's fetch state on the leader (the ISR, the high
// watermark, waiting acks=all produces), and gets KIP-595's
// DivergingEpoch instead of records when its LastFetchedEpoch shows its
// log diverged. A broker that is not the partition's leader, or a fetch
// from a broker not assigned the partition, gets NOT_LEADER_OR_FOLLOWER;
// a CurrentLeaderEpoch (v9+) older or newer than the leader's gets
// FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH (KIP-320); from v16 such
// answers carry the leader and its endpoint (KIP-951).
//
// Fetch sessions (KIP-227, fetch_session.go): a full fetch (v7+,
// SessionEpoch 0) may leave a session in the broker's cache, and the
// fetcher's later requests name only what changed; their responses name
// only the partitions with something new.
//
// Fetching from the closest replica (KIP-392, fetch_preferred.go): from
// v11 a consumer names its rack (client.rack), and with
// replica.selector.class set to Kafka's RackAwareReplicaSelector the
// leader answers a consumer of another rack with the PreferredReadReplica
// of an in-sync follower in the consumer's rack, and no records. A
// follower serves consumers (v11+) up to its own high watermark.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/fetchsession"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

func init() {
	register(&api{key: kmsg.Fetch.Int16(), min: 0, max: 17, serve: serveFetch})
}

// fetchPart is one partition's share of a fetch response.
type fetchPart struct {
	partition      int32
	errorCode      int16
	hw, logStart   int64
	lso            int64 // last stable offset, when hasLSO
	hasLSO         bool  // else the high watermark stands for it
	aborted        []segment.AbortedTxn
	committed      bool // read_committed: AbortedTransactions is an array, not null
	records        pagecache.Region
	part           *replica.Partition
	offset         int64
	partitionBytes int32

	followerStart    int64             // a follower's own log start (v5+), -1 from a consumer
	preferred        int32             // KIP-392: PreferredReadReplica + 1; 0 none
	leaderEpoch      int32             // the request's CurrentLeaderEpoch (v9+), -1 unchecked
	lastFetchedEpoch int32             // a follower's LastFetchedEpoch (v12+), -1 absent
	diverging        *replica.EpochEnd // KIP-595, to a follower
	currentLeader    *[2]int32         // KIP-951: leader id and epoch; nil when not told
}

type fetchTopic struct {
	name  string
	id    [16]byte
	parts []fetchPart
}

// preferredReadReplica is the partition's PreferredReadReplica (v11+),
// -1 when none.
func (fp *fetchPart) preferredReadReplica() int32 { return fp.preferred - 1 }

// fetcher is who sent a fetch: a follower's broker id (-1 for a
// consumer) and a consumer's rack; rackAware says the consumer may be
// sent to, or read from, a follower (Fetch v11+, Kafka's ClientMetadata).
type fetcher struct {
	replica       int32
	rack          string
	rackAware     bool
	readCommitted bool // IsolationLevel 1 (v4+)
}

func serveFetch(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.FetchRequest)
	from := fetcher{replica: fetchReplicaID(r.Version, req), rack: req.Rack, rackAware: r.Version >= 11,
		readCommitted: r.Version >= 4 && req.IsolationLevel == 1}
	if from.replica < 0 {
		respond = b.fetchQuota(r, respond) // KIP-13, KIP-219: consumers only
	}
	scope := b.scopeFetch(r.Version, req, from.replica)
	b.authorizeFetch(r, scope.topics, from.replica >= 0)
	if scope.sessionRefused() {
		respond(b.fetchResponse(r.Version, scope))
		return nil
	}
	bytes, failed := b.readFetch(scope.topics, req.MaxBytes, from)
	if req.MaxWaitMillis <= 0 || bytes >= int64(req.MinBytes) || failed {
		b.respondFetch(r.Version, scope, from, respond)
		return nil
	}
	b.parkFetch(r.Version, req, scope, from, respond)
	return nil
}

// fetchReplicaID is the fetching follower's broker id, -1 for a
// consumer: ReplicaState.ReplicaId from v15, ReplicaID before.
func fetchReplicaID(version int16, req *kmsg.FetchRequest) int32 {
	if version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// parkFetch puts a fetch in the purgatory. What it holds while it waits
// is its partitions (one entry each, duplicates collapsed) and a few
// words: not the request, nor a goroutine.
func (b *Broker) parkFetch(version int16, req *kmsg.FetchRequest, scope fetchScope, from fetcher, respond func(vnet.Response)) {
	maxBytes := req.MaxBytes
	f := &replica.DelayedFetch{MinBytes: req.MinBytes, MaxBytes: maxBytes, Online: b.hosted}
	for _, t := range scope.topics {
		for _, fp := range t.parts {
			if fp.part != nil {
				f.Parts = append(f.Parts, replica.FetchPartition{Partition: fp.part, Offset: fp.offset, MaxBytes: fp.partitionBytes, ToLogEnd: from.replica >= 0})
			}
		}
	}
	if from.replica >= 0 {
		f.HeldBack = func(p *replica.Partition) bool { return b.parts.LeaderQuota().LeaderThrottles(p, from.replica) }
	}
	f.Complete = func(bool) {
		// Satisfied or expired, the response is read again from the logs.
		b.readFetch(scope.topics, maxBytes, from)
		b.respondFetch(version, scope, from, respond)
	}
	b.purgatory.Watch(f, time.Duration(req.MaxWaitMillis)*time.Millisecond, f.Keys()...)
}

// hosted reports whether p is still this node's replica of its partition
// (a deleted partition is not).
func (b *Broker) hosted(p *replica.Partition) bool {
	q, ok := b.parts.Partition(p.TP)
	return ok && q == p
}

// resolveFetch finds the partitions a fetch names. A partition named
// more than once is answered once, at the place it was first named, with
// the fetch offset and limit of its last mention: Kafka collapses them
// the same way, reading the request into a LinkedHashMap keyed by
// topic(-id) and partition (FetchRequest.fetchData), so that one request
// costs at most one entry per distinct partition.
func (b *Broker) resolveFetch(version int16, req *kmsg.FetchRequest) []fetchTopic {
	topics := make([]fetchTopic, 0, len(req.Topics))
	var seen fetchIndex
	for _, rt := range req.Topics {
		ft := fetchTopic{name: rt.Topic, id: rt.TopicID}
		known := true
		if version >= 13 {
			t, ok := b.meta.image().TopicByID(rt.TopicID)
			if known = ok; ok {
				ft.name = t.Name
			}
		}
		for _, rp := range rt.Partitions {
			key := fetchKey{partition: rp.Partition}
			if version >= 13 {
				key.id = rt.TopicID
			} else {
				key.name = rt.Topic
			}
			if at, dup := seen.find(key); dup {
				fp := seen.part(topics, &ft, at)
				fp.offset, fp.partitionBytes = rp.FetchOffset, rp.PartitionMaxBytes
				continue
			}
			seen.add(key, len(topics), len(ft.parts))
			fp := b.newFetchPart(ft.name, known, rp.Partition, fetchParams(version, rp))
			ft.parts = append(ft.parts, fp)
		}
		if len(ft.parts) > 0 || len(rt.Partitions) == 0 { // a topic left empty by the collapse is not answered
			topics = append(topics, ft)
		}
	}
	return topics
}

// fetchParams is what a fetch asks of one partition, with the fields
// its version lacks at their "absent" values.
func fetchParams(version int16, rp kmsg.FetchRequestTopicPartition) fetchsession.Params {
	p := fetchsession.Params{FetchOffset: rp.FetchOffset, MaxBytes: rp.PartitionMaxBytes, LogStartOffset: -1,
		CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}
	if version >= 5 {
		p.LogStartOffset = rp.LogStartOffset
	}
	if version >= 9 {
		p.CurrentLeaderEpoch = rp.CurrentLeaderEpoch
	}
	if version >= 12 {
		p.LastFetchedEpoch = rp.LastFetchedEpoch
	}
	return p
}

// newFetchPart resolves one partition of a fetch; known is false for a
// topic id the image does not have.
func (b *Broker) newFetchPart(topic string, known bool, partition int32, p fetchsession.Params) fetchPart {
	fp := fetchPart{partition: partition, hw: -1, logStart: -1, offset: p.FetchOffset, partitionBytes: p.MaxBytes,
		followerStart: p.LogStartOffset, leaderEpoch: p.CurrentLeaderEpoch, lastFetchedEpoch: p.LastFetchedEpoch}
	if !known {
		fp.errorCode = kerr.UnknownTopicID.Code
		return fp
	}
	part, err := b.partition(topic, partition)
	fp.part, fp.errorCode = part, errorCode(err)
	return fp
}

// fetchKey names a partition in a fetch: by topic name before v13, by
// topic id from v13.
type fetchKey struct {
	name      string
	id        [16]byte
	partition int32
}

// fetchIndex finds the partitions of a fetch already resolved: a scan
// while they are few (the common fetch), a map beyond.
type fetchIndex struct {
	keys []fetchKey
	at   [][2]int // topic and partition index of keys[i]
	m    map[fetchKey][2]int
}

const fetchIndexScan = 16

func (x *fetchIndex) find(k fetchKey) ([2]int, bool) {
	if x.m != nil {
		at, ok := x.m[k]
		return at, ok
	}
	for i := range x.keys {
		if x.keys[i] == k {
			return x.at[i], true
		}
	}
	return [2]int{}, false
}

func (x *fetchIndex) add(k fetchKey, topic, part int) {
	at := [2]int{topic, part}
	if x.m == nil && len(x.keys) < fetchIndexScan {
		x.keys, x.at = append(x.keys, k), append(x.at, at)
		return
	}
	if x.m == nil {
		x.m = make(map[fetchKey][2]int, 2*fetchIndexScan)
		for i := range x.keys {
			x.m[x.keys[i]] = x.at[i]
		}
		x.keys, x.at = nil, nil
	}
	x.m[k] = at
}

// part returns the partition at a position found: in a topic already
// resolved, or in cur, the one being resolved.
func (x *fetchIndex) part(topics []fetchTopic, cur *fetchTopic, at [2]int) *fetchPart {
	if at[0] == len(topics) {
		return &cur.parts[at[1]]
	}
	return &topics[at[0]].parts[at[1]]
}

// readFetch reads every partition within the response budget, for a
// consumer (from < 0) or the follower from, and says how many bytes it
// found and whether any partition must answer at once (an error, a
// diverging epoch).
func (b *Broker) readFetch(topics []fetchTopic, maxBytes int32, from fetcher) (int64, bool) {
	budget := int64(maxBytes)
	if budget <= 0 {
		budget = 1 << 62
	}
	var total int64
	failed := false
	for ti := range topics {
		for pi := range topics[ti].parts {
			fp := &topics[ti].parts[pi]
			if fp.part == nil {
				failed = failed || fp.errorCode != 0
				continue
			}
			limit := int(max(min(int64(fp.partitionBytes), budget), 0))
			var err error
			if from.replica >= 0 {
				err = b.readForFollower(fp, from.replica, limit, total == 0)
			} else {
				err = b.readForConsumer(fp, from, limit, total == 0)
			}
			fp.errorCode = errorCode(err)
			failed = failed || err != nil || fp.diverging != nil || fp.preferred != 0
			total += fp.records.Len
			budget -= fp.records.Len
		}
	}
	return total, failed
}

// readForConsumer reads up to the high watermark after KIP-320's check
// of the request's CurrentLeaderEpoch: on the leader, unless KIP-392
// sends the consumer to a follower of its rack; on a follower, for a
// consumer that may read from one (fetch_preferred.go).
func (b *Broker) readForConsumer(fp *fetchPart, from fetcher, limit int, minOneBatch bool) error {
	fp.hw, fp.logStart, fp.records, fp.preferred = fp.part.HighWatermark(), fp.part.StartOffset(), pagecache.Region{}, 0
	fp.lso, fp.hasLSO, fp.aborted, fp.committed = fp.part.LastStableOffset(), true, nil, from.readCommitted
	if role, s := fp.part.State(); role == replica.RoleFollower {
		return readOnFollower(fp, s, from, limit, minOneBatch)
	}
	if err := fp.part.CheckLeaderEpoch(fp.leaderEpoch); err != nil {
		return err
	}
	if id := b.preferredReplica(fp, from); id >= 0 {
		fp.preferred = id + 1 // Kafka skips the read
		return nil
	}
	return readPartition(fp, from, limit, minOneBatch)
}

// readPartition reads fp's records for a consumer: below the high
// watermark, or below the last stable offset with the aborted
// transactions of the range for read_committed (Kafka's
// LocalLog.read with FetchIsolation.TXN_COMMITTED and
// addAbortedTransactions).
func readPartition(fp *fetchPart, from fetcher, limit int, minOneBatch bool) error {
	if !from.readCommitted {
		region, err := fp.part.Read(fp.offset, limit, minOneBatch)
		fp.records = region
		return err
	}
	region, lso, err := fp.part.ReadCommitted(fp.offset, limit, minOneBatch)
	fp.records, fp.lso = region, lso
	if err == nil && region.Len > 0 {
		fp.aborted = fp.part.AbortedTransactions(fp.offset, lso)
	}
	return err
}

// readForFollower serves a follower's fetch up to the log end; the
// leader's replication quota may hold its records back (KIP-73: the
// follower's fetch state advances, the answer is empty).
func (b *Broker) readForFollower(fp *fetchPart, from int32, limit int, minOneBatch bool) error {
	req := replica.FetchRequest{ReplicaID: from, FetchOffset: fp.offset, LastFetchedEpoch: fp.lastFetchedEpoch, CurrentLeaderEpoch: fp.leaderEpoch}
	d, region, err := fp.part.ReadForFollower(req, limit, minOneBatch)
	if region.Len > 0 && b.leaderHoldsBack(fp, from) {
		region = pagecache.Region{}
	}
	fp.hw, fp.logStart, fp.records, fp.diverging = d.HighWatermark, d.LogStartOffset, region, d.Diverging
	fp.lso, fp.hasLSO = fp.part.LastStableOffset(), true
	if err != nil {
		fp.hw, fp.logStart = fp.part.HighWatermark(), fp.part.StartOffset()
	}
	return err
}

// respondFetch sends the response, first counting a follower's
// throttled partitions towards the leader's replication quota.
func (b *Broker) respondFetch(version int16, scope fetchScope, from fetcher, respond func(vnet.Response)) {
	if from.replica >= 0 {
		b.recordLeaderQuota(version, scope.topics)
	}
	respond(b.fetchResponse(version, scope))
}

func (b *Broker) fetchResponse(version int16, scope fetchScope) vnet.Response {
	head, topics := b.sessionReply(scope)
	for _, t := range topics {
		for _, fp := range t.parts {
			if fp.records.Len > 0 {
				b.metrics.fetched(t.name, fp.records.Len)
			}
		}
	}
	if version < 4 {
		return legacyFetchResponse(version, topics)
	}
	return vnet.Response{Parts: encodeFetchResponse(version, head, topics, b.fetchLeaders(version, topics))}
}

// fetchLeaders fills KIP-951's CurrentLeader (Fetch v16+) of every
// partition answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH, and
// returns the endpoints of the leaders named (NodeEndpoints).
func (b *Broker) fetchLeaders(version int16, topics []fetchTopic) []kmsg.FetchResponseBroker {
	if version < 16 {
		return nil
	}
	var out []kmsg.FetchResponseBroker
	for ti := range topics {
		for pi := range topics[ti].parts {
			fp := &topics[ti].parts[pi]
			if !movedLeader(fp.errorCode) {
				continue
			}
			id, epoch, ep, ok := b.leaderOf(topics[ti].name, fp.partition)
			if !ok || id == b.nodeID {
				continue
			}
			fp.currentLeader = &[2]int32{id, epoch}
			out = appendFetchBroker(out, id, ep)
		}
	}
	return out
}

func appendFetchBroker(out []kmsg.FetchResponseBroker, id int32, ep metadata.Endpoint) []kmsg.FetchResponseBroker {
	for _, br := range out {
		if br.NodeID == id {
			return out
		}
	}
	nb := kmsg.NewFetchResponseBroker()
	nb.NodeID, nb.Host, nb.Port = id, ep.Host, ep.Port
	return append(out, nb)
}
