package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CommitOffsets handles OffsetCommit (Kafka's KafkaApis and
// handleCommitOffsets). Members commit with their member id and
// generation; a group without members also takes "simple" commits
// (generation -1, no member id) from clients that assign partitions
// themselves. Unknown partitions get UNKNOWN_TOPIC_OR_PARTITION and
// metadata over offset.metadata.max.bytes OFFSET_METADATA_TOO_LARGE,
// whatever the group says; the rest are written as one batch and
// become visible once it is in the log.
func (c *Coordinator) CommitOffsets(now time.Time, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	c.now = now
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	codes := map[topicPartition]int16{}
	var valid []topicPartition
	commits := map[topicPartition]committed{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			cm := c.committedFrom(req, p)
			switch {
			case c.cfg.KnownPartition != nil && !c.cfg.KnownPartition(t.Topic, p.Partition):
				codes[tp] = kerr.UnknownTopicOrPartition.Code
			case len(cm.metadata) > c.cfg.OffsetMetadataMaxBytes:
				codes[tp] = kerr.OffsetMetadataTooLarge.Code
			default:
				valid = append(valid, tp)
				commits[tp] = cm
			}
		}
	}
	code := c.commit(req, valid, commits)
	for _, tp := range valid {
		codes[tp] = code
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes[topicPartition{t.Topic, p.Partition}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// committedFrom is what a request's partition commits: the v1 commit
// timestamp if given, else now; an expiry only when v2-v4 asked for a
// retention time.
func (c *Coordinator) committedFrom(req *kmsg.OffsetCommitRequest, p kmsg.OffsetCommitRequestTopicPartition) committed {
	now := c.now.UnixMilli()
	cm := committed{offset: p.Offset, leaderEpoch: p.LeaderEpoch, commitTimestamp: now, expireTimestamp: -1}
	if cm.leaderEpoch < 0 {
		cm.leaderEpoch = -1
	}
	if p.Metadata != nil {
		cm.metadata = *p.Metadata
	}
	if req.Version == 1 && p.Timestamp != -1 {
		cm.commitTimestamp = p.Timestamp
	}
	if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
		cm.expireTimestamp = now + req.RetentionTimeMillis
	}
	return cm
}

// commit validates the committer and stores the valid partitions; it
// returns their common error code.
func (c *Coordinator) commit(req *kmsg.OffsetCommitRequest, valid []topicPartition, commits map[topicPartition]committed) int16 {
	if len(valid) == 0 {
		return 0 // Kafka answers without consulting the group
	}
	if code := c.check(req.Group, kmsg.OffsetCommit); code != 0 {
		return code
	}
	g := c.groups[req.Group]
	if g == nil {
		if req.Generation >= 0 {
			return kerr.IllegalGeneration.Code // a member of a generation the group no longer has
		}
		g = newGroup(req.Group, c.now, c.bounds) // a simple consumer storing offsets only
		c.groups[req.Group] = g
	}
	if g.cons != nil {
		if code := validateConsumerCommit(g, req); code != 0 {
			return code
		}
		return c.storeOffsets(g, valid, commits)
	}
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	if code := validateCommit(g, req.Generation, req.MemberID, instanceID); code != 0 {
		return code
	}
	switch g.state {
	case Empty:
	case Stable, PreparingRebalance:
		// Commits stay allowed while rebalancing; the heartbeat tells the
		// member to rejoin.
		c.scheduleHeartbeat(g, g.members[req.MemberID])
	case CompletingRebalance:
		return kerr.RebalanceInProgress.Code
	default:
		return kerr.CoordinatorNotAvailable.Code
	}
	return c.storeOffsets(g, valid, commits)
}

// validateConsumerCommit is Kafka's ConsumerGroup.validateOffsetCommit:
// a member commits with its member id and its current member epoch in
// the generation field (OffsetCommit v9+; a classic member with any
// version, ILLEGAL_GENERATION if the epoch is not its own); an
// anonymous commit (no member id, epoch -1) only to a group without
// members.
func validateConsumerCommit(g *group, req *kmsg.OffsetCommitRequest) int16 {
	if req.MemberID == "" && req.Generation < 0 {
		if len(g.cons.members) > 0 {
			return kerr.UnknownMemberID.Code
		}
		return 0
	}
	m := g.cons.members[req.MemberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case m.classic != nil && req.Generation != m.epoch: // a classic member commits with its generation, any version
		return kerr.IllegalGeneration.Code
	case m.classic != nil:
		return 0
	case req.Version < 9:
		return kerr.UnsupportedVersion.Code // a consumer protocol member commits with v9+
	case req.Generation != m.epoch:
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// validateCommit is Kafka's validateOffsetCommit: a committer naming a
// member or generation must be that member of this generation; an
// anonymous one may commit only to a group without members.
func validateCommit(g *group, generation int32, memberID, instanceID string) int16 {
	switch {
	case g.is(Dead):
		return kerr.CoordinatorNotAvailable.Code
	case generation >= 0 || memberID != "" || instanceID != "":
		if code := validateMember(g, memberID, instanceID); code != 0 {
			return code
		}
		if generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
	case !g.is(Empty):
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// storeOffsets writes the commits as one batch and applies them once
// written.
func (c *Coordinator) storeOffsets(g *group, valid []topicPartition, commits map[topicPartition]committed) int16 {
	if len(valid) == 0 {
		return 0
	}
	entries := make([]entry, 0, len(valid))
	for _, tp := range valid {
		entries = append(entries, entry{key: offsetKey(g.id, tp), value: offsetValue(commits[tp])})
	}
	if code := appendCode(c.append(entries), true); code != 0 {
		return code
	}
	for _, tp := range valid {
		g.offsets[tp] = commits[tp]
	}
	return 0
}

// FetchOffsets handles one group of OffsetFetch (Kafka's
// handleFetchOffsets): the committed offsets of the partitions asked
// for, -1 with empty metadata where none is committed, or every
// committed offset when topics is nil. It answers whatever the group's
// state, since simple consumers have no members.
func (c *Coordinator) FetchOffsets(now time.Time, groupID string, topics []kmsg.OffsetFetchRequestGroupTopic) (int16, []kmsg.OffsetFetchResponseGroupTopic) {
	return c.FetchOffsetsRequireStable(now, groupID, topics, false)
}

// FetchOffsetsRequireStable is FetchOffsets for OffsetFetch v7+: with
// requireStable (KIP-447), a partition named in topics with a
// transactional offset still pending answers UNSTABLE_OFFSET_COMMIT, so
// that the consumer retries once the transaction ends.
func (c *Coordinator) FetchOffsetsRequireStable(now time.Time, groupID string, topics []kmsg.OffsetFetchRequestGroupTopic, requireStable bool) (int16, []kmsg.OffsetFetchResponseGroupTopic) {
	c.now = now
	if code := c.check(groupID, kmsg.OffsetFetch); code != 0 {
		return code, nil
	}
	g := c.groups[groupID]
	if topics == nil {
		return 0, allOffsets(g)
	}
	out := make([]kmsg.OffsetFetchResponseGroupTopic, 0, len(topics))
	for _, t := range topics {
		rt := kmsg.NewOffsetFetchResponseGroupTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			cm, ok := committed{}, false
			if g != nil {
				cm, ok = g.offsets[topicPartition{t.Topic, p}]
			}
			rp := fetched(p, cm, ok)
			if requireStable && c.unstable(groupID, topicPartition{t.Topic, p}) {
				rp.Offset, rp.LeaderEpoch, rp.ErrorCode = -1, -1, kerr.UnstableOffsetCommit.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return 0, out
}

// allOffsets lists every committed offset of g, by topic and partition.
func allOffsets(g *group) []kmsg.OffsetFetchResponseGroupTopic {
	out := []kmsg.OffsetFetchResponseGroupTopic{}
	if g == nil || g.is(Dead) {
		return out
	}
	tps := make([]topicPartition, 0, len(g.offsets))
	for tp := range g.offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)
	for _, tp := range tps {
		if len(out) == 0 || out[len(out)-1].Topic != tp.topic {
			rt := kmsg.NewOffsetFetchResponseGroupTopic()
			rt.Topic = tp.topic
			out = append(out, rt)
		}
		last := &out[len(out)-1]
		last.Partitions = append(last.Partitions, fetched(tp.partition, g.offsets[tp], true))
	}
	return out
}

func fetched(p int32, cm committed, ok bool) kmsg.OffsetFetchResponseGroupTopicPartition {
	rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = p, -1, -1
	md := ""
	if ok {
		rp.Offset, rp.LeaderEpoch, md = cm.offset, cm.leaderEpoch, cm.metadata
	}
	rp.Metadata = &md
	return rp
}

func compareTP(a, b topicPartition) int {
	if a.topic != b.topic {
		if a.topic < b.topic {
			return -1
		}
		return 1
	}
	return int(a.partition) - int(b.partition)
}

func sortTPs(tps []topicPartition) { slices.SortFunc(tps, compareTP) }
