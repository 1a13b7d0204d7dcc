package cluster

// Fetch sessions (KIP-227) on the broker: the fetchsession.Cache,
// guarded by one mutex, between a Fetch request and its response. A
// full fetch (SessionEpoch 0) is read as named and may leave a session
// behind; an incremental one is read over every partition of its
// session, with the parameters last asked (so that a follower's quiet
// partitions still count as fetched for the ISR), and is answered with
// only the partitions that have something new.

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/fetchsession"
)

// fetchSessions is the broker's session cache, made at first use from
// max.incremental.fetch.session.cache.slots and
// min.incremental.fetch.session.eviction.ms.
type fetchSessions struct {
	once sync.Once
	mu   sync.Mutex
	c    *fetchsession.Cache
}

func (b *Broker) sessionCache() *fetchSessions {
	s := &b.fetchSess
	s.once.Do(func() {
		s.c = fetchsession.NewCache(fetchsession.Config{Slots: b.cfg.MaxIncrementalFetchSessionCacheSlots,
			EvictionMs: int64(b.cfg.MinIncrementalFetchSessionEvictionMs)})
	})
	return s
}

// fetchScope is a fetch's partitions and its session context.
type fetchScope struct {
	topics []fetchTopic
	ctx    *fetchsession.Context
}

// scopeFetch resolves a fetch's partitions and its session: the
// request's own for a full fetch, the session's for an incremental one.
func (b *Broker) scopeFetch(version int16, req *kmsg.FetchRequest, from int32) fetchScope {
	topics := b.resolveFetch(version, req)
	sreq := fetchsession.Request{Version: version, SessionID: req.SessionID, Epoch: req.SessionEpoch,
		Follower: from >= 0, Partitions: sessionPartitions(version, topics), NowMs: time.Now().UnixMilli()}
	if version < 7 {
		sreq.SessionID, sreq.Epoch = fetchsession.InvalidSessionID, fetchsession.FinalEpoch
	}
	for _, ft := range req.ForgottenTopics {
		for _, p := range ft.Partitions {
			sreq.Forgotten = append(sreq.Forgotten, sessionKey(version, ft.Topic, ft.TopicID, p))
		}
	}
	sc := b.sessionCache()
	sc.mu.Lock()
	ctx := sc.c.NewContext(sreq)
	sc.mu.Unlock()
	if ctx.Kind == fetchsession.Incremental {
		topics = b.resolveSession(version, ctx.Partitions)
	}
	return fetchScope{topics: topics, ctx: ctx}
}

func sessionKey(version int16, topic string, id [16]byte, partition int32) fetchsession.Key {
	if version >= 13 {
		return fetchsession.Key{TopicID: id, Partition: partition}
	}
	return fetchsession.Key{Topic: topic, Partition: partition}
}

// sessionPartitions lists topics' partitions, in order, as the session
// keeps them.
func sessionPartitions(version int16, topics []fetchTopic) []fetchsession.Partition {
	var out []fetchsession.Partition
	for _, t := range topics {
		for _, fp := range t.parts {
			out = append(out, fetchsession.Partition{Key: sessionKey(version, t.name, t.id, fp.partition),
				Params: fetchsession.Params{FetchOffset: fp.offset, LogStartOffset: fp.followerStart, MaxBytes: fp.partitionBytes,
					CurrentLeaderEpoch: fp.leaderEpoch, LastFetchedEpoch: fp.lastFetchedEpoch}})
		}
	}
	return out
}

// resolveSession finds the partitions of an incremental fetch's
// session, grouping neighbours of one topic as Kafka's response does (a
// topic may then appear twice).
func (b *Broker) resolveSession(version int16, parts []fetchsession.Partition) []fetchTopic {
	var topics []fetchTopic
	for _, sp := range parts {
		n := len(topics)
		if n == 0 || topics[n-1].id != sp.TopicID || version < 13 && topics[n-1].name != sp.Topic {
			ft := fetchTopic{name: sp.Topic, id: sp.TopicID}
			if version >= 13 {
				if t, ok := b.meta.image().TopicByID(sp.TopicID); ok {
					ft.name = t.Name
				}
			}
			topics = append(topics, ft)
			n++
		}
		t := &topics[n-1]
		known := version < 13 || t.name != ""
		t.parts = append(t.parts, b.newFetchPart(t.name, known, sp.Partition, sp.Params))
	}
	return topics
}

// sessionAnswers is what the session needs of each partition read, in
// the order of the scope's partitions.
func sessionAnswers(topics []fetchTopic) []fetchsession.Answer {
	var out []fetchsession.Answer
	for _, t := range topics {
		for i := range t.parts {
			fp := &t.parts[i]
			out = append(out, fetchsession.Answer{RecordsBytes: fp.records.Len, HighWatermark: fp.hw, LogStartOffset: fp.logStart,
				ErrorCode: fp.errorCode, Diverging: fp.diverging != nil, PreferredReadReplica: fp.preferredReadReplica()})
		}
	}
	return out
}

// sessionReply completes the scope's session at its response and drops
// from topics the partitions an incremental response leaves out.
func (b *Broker) sessionReply(s fetchScope) (fetchHead, []fetchTopic) {
	if s.ctx == nil {
		return fetchHead{}, s.topics
	}
	sc := b.sessionCache()
	sc.mu.Lock()
	r := sc.c.Respond(s.ctx, sessionAnswers(s.topics), time.Now().UnixMilli())
	sc.mu.Unlock()
	head := fetchHead{errorCode: r.ErrorCode, sessionID: r.SessionID}
	if r.ErrorCode != 0 {
		return head, nil
	}
	if r.Keep == nil {
		return head, s.topics
	}
	return head, keepParts(s.topics, r.Keep)
}

// keepParts is topics with only the partitions keep marks, and without
// the topics left empty.
func keepParts(topics []fetchTopic, keep []bool) []fetchTopic {
	out := make([]fetchTopic, 0, len(topics))
	i := 0
	for _, t := range topics {
		kept := t
		kept.parts = nil
		for _, fp := range t.parts {
			if keep[i] {
				kept.parts = append(kept.parts, fp)
			}
			i++
		}
		if len(kept.parts) > 0 {
			out = append(out, kept)
		}
	}
	return out
}

// sessionRefused says whether a fetch's session was refused: it is then
// answered at once with the error alone.
func (s fetchScope) sessionRefused() bool {
	return s.ctx != nil && s.ctx.Kind == fetchsession.SessionError
}
