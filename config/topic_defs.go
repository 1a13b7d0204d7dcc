package config

import "fmt"

// topicDef is one topic-level property (Kafka's TopicConfig). Its
// default is the broker property named by synonym (Kafka's "server
// default property"), or fixed when there is none.
type topicDef struct {
	name    string
	typ     *valueType
	synonym string
	fixed   string
	check   check
	// field returns a pointer to the Topic field; nil for a property Varve
	// accepts and validates but does not use.
	field func(t *Topic) any
	note  string
}

func (d *topicDef) value(raw string) (any, error) { return parseChecked(d.name, raw, d.typ, d.check) }

// topicDefs is every topic property Varve knows, with Kafka's LogConfig
// ranges (stricter where doc.go says so).
var topicDefs = []topicDef{
	{name: "cleanup.policy", typ: tCleanup, synonym: "log.cleanup.policy", field: func(t *Topic) any { return &t.cleanupPolicy }},
	{name: "compression.type", typ: tString, synonym: "compression.type", check: oneOf(compressionTypes...), field: func(t *Topic) any { return &t.compressionType }},
	{name: "compression.gzip.level", typ: tInt, synonym: "compression.gzip.level", check: levelOrMinusOne(1, 9)},
	{name: "compression.lz4.level", typ: tInt, synonym: "compression.lz4.level", check: between(1, 17)},
	{name: "compression.zstd.level", typ: tInt, synonym: "compression.zstd.level", check: between(-131072, 22)},
	{name: "delete.retention.ms", typ: tLong, synonym: "log.cleaner.delete.retention.ms", check: atLeast(0), field: func(t *Topic) any { return &t.deleteRetentionMs }},
	{name: "file.delete.delay.ms", typ: tLong, synonym: "log.segment.delete.delay.ms", check: atLeast(0), field: func(t *Topic) any { return &t.fileDeleteDelayMs }},
	{name: "flush.messages", typ: tLong, synonym: "log.flush.interval.messages", check: atLeast(1), field: func(t *Topic) any { return &t.flushMessages }},
	{name: "flush.ms", typ: tLong, synonym: "log.flush.interval.ms", check: atLeast(0), field: func(t *Topic) any { return &t.flushMs }},
	{name: "index.interval.bytes", typ: tInt, synonym: "log.index.interval.bytes", check: atLeast(0), field: func(t *Topic) any { return &t.indexIntervalBytes }},
	{name: "max.compaction.lag.ms", typ: tLong, synonym: "log.cleaner.max.compaction.lag.ms", check: atLeast(1), field: func(t *Topic) any { return &t.maxCompactionLagMs }},
	{name: "max.message.bytes", typ: tInt, synonym: "message.max.bytes", check: atLeast(minMessageBytes), field: func(t *Topic) any { return &t.maxMessageBytes }},
	{name: "message.timestamp.type", typ: tTimestamp, synonym: "log.message.timestamp.type", field: func(t *Topic) any { return &t.messageTimestampType }},
	{name: "message.timestamp.before.max.ms", typ: tLong, synonym: "log.message.timestamp.before.max.ms", check: atLeast(0), field: func(t *Topic) any { return &t.messageTimestampBeforeMaxMs }},
	{name: "message.timestamp.after.max.ms", typ: tLong, synonym: "log.message.timestamp.after.max.ms", check: atLeast(0), field: func(t *Topic) any { return &t.messageTimestampAfterMaxMs }},
	{name: "min.cleanable.dirty.ratio", typ: tDouble, synonym: "log.cleaner.min.cleanable.ratio", check: between(0, 1), field: func(t *Topic) any { return &t.minCleanableDirtyRatio }},
	{name: "min.compaction.lag.ms", typ: tLong, synonym: "log.cleaner.min.compaction.lag.ms", check: atLeast(0), field: func(t *Topic) any { return &t.minCompactionLagMs }},
	{name: "min.insync.replicas", typ: tInt, synonym: "min.insync.replicas", check: atLeast(1), field: func(t *Topic) any { return &t.minInsyncReplicas }},
	{name: "preallocate", typ: tBool, synonym: "log.preallocate", field: func(t *Topic) any { return &t.preallocate }},
	{name: "retention.bytes", typ: tLong, synonym: "log.retention.bytes", field: func(t *Topic) any { return &t.retentionBytes }},
	{name: "retention.ms", typ: tLong, synonym: "log.retention.ms", check: atLeast(-1), field: func(t *Topic) any { return &t.retentionMs }},
	{name: "segment.bytes", typ: tInt, synonym: "log.segment.bytes", check: atLeast(minSegmentBytes), field: func(t *Topic) any { return &t.segmentBytes }},
	{name: "segment.index.bytes", typ: tInt, synonym: "log.index.size.max.bytes", check: atLeast(minIndexBytes), field: func(t *Topic) any { return &t.segmentIndexBytes }},
	{name: "segment.jitter.ms", typ: tLong, synonym: "log.roll.jitter.ms", check: atLeast(0), field: func(t *Topic) any { return &t.segmentJitterMs }},
	{name: "segment.ms", typ: tLong, synonym: "log.roll.ms", check: atLeast(1), field: func(t *Topic) any { return &t.segmentMs }},
	{name: "unclean.leader.election.enable", typ: tBool, synonym: "unclean.leader.election.enable", field: func(t *Topic) any { return &t.uncleanLeaderElectionEnable }},
	{name: "message.downconversion.enable", typ: tBool, synonym: "log.message.downconversion.enable", note: "Varve never down-converts"},
	{name: "leader.replication.throttled.replicas", typ: tList, fixed: "", check: throttledReplicas("leader.replication.throttled.replicas"),
		field: func(t *Topic) any { return &t.leaderThrottledReplicas },
		note:  "\"*\" or partition:broker pairs whose fetches a leader throttles at leader.replication.throttled.rate"},
	{name: "follower.replication.throttled.replicas", typ: tList, fixed: "", check: throttledReplicas("follower.replication.throttled.replicas"),
		field: func(t *Topic) any { return &t.followerThrottledReplicas },
		note:  "\"*\" or partition:broker pairs a follower throttles at follower.replication.throttled.rate"},
	{name: "remote.storage.enable", typ: tBool, fixed: "false", check: mustBeFalse("Varve has no tiered storage"), note: "true is refused: Varve has no tiered storage"},
	{name: "local.retention.ms", typ: tLong, synonym: "log.local.retention.ms", check: atLeast(-2), note: "tiered storage"},
	{name: "local.retention.bytes", typ: tLong, synonym: "log.local.retention.bytes", check: atLeast(-2), note: "tiered storage"},
	{name: "remote.log.copy.disable", typ: tBool, fixed: "false", note: "tiered storage"},
	{name: "remote.log.delete.on.disable", typ: tBool, fixed: "false", note: "tiered storage"},
}

func mustBeFalse(why string) check {
	return func(v any) error {
		if v.(bool) {
			return fmt.Errorf("%w: %s", ErrUnsupported, why)
		}
		return nil
	}
}
