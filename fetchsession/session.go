package fetchsession

import "math"

// Session ids and epochs with a meaning of their own (Kafka's
// FetchMetadata).
const (
	InvalidSessionID int32 = 0  // no session
	InitialEpoch     int32 = 0  // a full fetch that may create a session
	FinalEpoch       int32 = -1 // a full fetch that creates none
)

// NextEpoch is the session epoch after e: FinalEpoch stays final, and
// MaxInt32 wraps to 1 (0 is the initial epoch).
func NextEpoch(e int32) int32 {
	switch {
	case e < 0:
		return FinalEpoch
	case e == math.MaxInt32:
		return 1
	default:
		return e + 1
	}
}

// Key names a partition in a session: by topic id from Fetch v13, by
// topic name before (the other field is left empty).
type Key struct {
	TopicID   [16]byte
	Topic     string
	Partition int32
}

// Params is what a fetch asks of one partition.
type Params struct {
	FetchOffset        int64
	LogStartOffset     int64 // a follower's own log start, -1 for a consumer
	MaxBytes           int32
	CurrentLeaderEpoch int32
	LastFetchedEpoch   int32
}

// Partition is one partition of a fetch.
type Partition struct {
	Key
	Params
}

// Answer is what a response says of one partition, as far as the
// session's incremental filter needs it.
type Answer struct {
	RecordsBytes         int64
	HighWatermark        int64
	LogStartOffset       int64
	ErrorCode            int16
	Diverging            bool
	PreferredReadReplica int32 // -1 when none
}

// cached is a partition of a session: what was last asked and what was
// last answered (Kafka's CachedPartition).
type cached struct {
	Partition
	hw       int64
	logStart int64
}

// mustRespond is Kafka's CachedPartition.maybeUpdateResponseData: the
// partition is in an incremental response when it has records, a new
// high watermark or log start, an error, a diverging epoch or a
// preferred read replica. An error resets the cached high watermark, so
// that the partition is sent again once the error clears.
func (c *cached) mustRespond(a Answer) bool {
	must := a.RecordsBytes > 0 || a.Diverging || a.PreferredReadReplica >= 0
	if c.hw != a.HighWatermark {
		must, c.hw = true, a.HighWatermark
	}
	if c.logStart != a.LogStartOffset {
		must, c.logStart = true, a.LogStartOffset
	}
	if a.ErrorCode != 0 {
		must, c.hw = true, -1
	}
	return must
}

// session is one fetch session (Kafka's FetchSession).
type session struct {
	id           int32
	privileged   bool // a follower's
	usesTopicIDs bool
	creationMs   int64
	lastUsedMs   int64
	epoch        int32 // the epoch the next request must carry
	parts        []*cached
	index        map[Key]int // position in parts

	// As of the last touch (Kafka keeps them in two TreeMaps).
	evictableByAll, evictableByPrivileged bool
}

func newSession(id int32, privileged, usesTopicIDs bool, nowMs int64) *session {
	return &session{id: id, privileged: privileged, usesTopicIDs: usesTopicIDs, creationMs: nowMs, lastUsedMs: nowMs,
		epoch: NextEpoch(InitialEpoch), index: map[Key]int{}}
}

func (s *session) size() int { return len(s.parts) }

func (s *session) add(c *cached) {
	s.index[c.Key] = len(s.parts)
	s.parts = append(s.parts, c)
}

func (s *session) remove(k Key) bool {
	i, ok := s.index[k]
	if !ok {
		return false
	}
	delete(s.index, k)
	s.parts = append(s.parts[:i], s.parts[i+1:]...)
	for j := i; j < len(s.parts); j++ {
		s.index[s.parts[j].Key] = j
	}
	return true
}

// update applies an incremental request: partitions named are added or
// get the new parameters, forgotten ones leave (Kafka's
// FetchSession.update).
func (s *session) update(parts []Partition, forgotten []Key) (added, updated, removed int) {
	for _, p := range parts {
		if i, ok := s.index[p.Key]; ok {
			s.parts[i].Params = p.Params
			updated++
			continue
		}
		s.add(&cached{Partition: p, hw: -1, logStart: -1})
		added++
	}
	for _, k := range forgotten {
		if s.remove(k) {
			removed++
		}
	}
	return added, updated, removed
}

// moveToEnd moves the partitions at the positions given (ascending) to
// the end of the session's order, keeping their relative order.
func (s *session) moveToEnd(at []int) {
	if len(at) == 0 {
		return
	}
	moved := make([]*cached, 0, len(at))
	kept := s.parts[:0:0]
	j := 0
	for i, c := range s.parts {
		if j < len(at) && at[j] == i {
			moved, j = append(moved, c), j+1
			continue
		}
		kept = append(kept, c)
	}
	s.parts = append(kept, moved...)
	for i, c := range s.parts {
		s.index[c.Key] = i
	}
}
