package replica

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// UndefinedEpoch and UndefinedOffset are Kafka's UNDEFINED_EPOCH and
// UNDEFINED_EPOCH_OFFSET: the answer for an epoch the cache cannot place.
const (
	UndefinedEpoch  int32 = -1
	UndefinedOffset int64 = -1
)

// EpochEntry says that leader epoch Epoch's first offset is StartOffset.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// EpochCache is Kafka's LeaderEpochFileCache in memory: for every leader
// epoch whose batches a replica's log holds, the offset of its first
// batch, in increasing order of both. A replica records an entry when it
// appends the first batch of a new epoch (as leader, at its election:
// KAFKA-7415), drops entries past a truncation point, and answers
// "where does epoch e end?" for a follower deciding how far to truncate
// (KIP-101, KIP-279). It is not safe for concurrent use; the partition's
// state machine owns it. The file form is leader-epoch-checkpoint (see
// MarshalCheckpoint).
type EpochCache struct {
	entries []EpochEntry
	gen     uint64 // counts changes, so an owner knows when to persist
}

// Generation changes whenever the entries do: the owner of the
// leader-epoch-checkpoint file rewrites it when the generation it wrote
// is not the current one.
func (c *EpochCache) Generation() uint64 { return c.gen }

// Entries returns a copy of the cache's entries.
func (c *EpochCache) Entries() []EpochEntry { return slices.Clone(c.entries) }

// Latest is the newest entry, or (UndefinedEpoch, UndefinedOffset) when
// the cache is empty.
func (c *EpochCache) Latest() EpochEntry {
	if len(c.entries) == 0 {
		return EpochEntry{UndefinedEpoch, UndefinedOffset}
	}
	return c.entries[len(c.entries)-1]
}

// Assign records that epoch starts at startOffset, as Kafka's assign does:
// nothing changes when epoch is already the latest and starts no later;
// otherwise every entry whose epoch is not below epoch, or whose start is
// not below startOffset, is removed first, so entries stay increasing in
// both fields.
func (c *EpochCache) Assign(epoch int32, startOffset int64) {
	if epoch < 0 || startOffset < 0 {
		return
	}
	if l := c.Latest(); l.Epoch == epoch && l.StartOffset <= startOffset {
		return
	}
	c.entries = slices.DeleteFunc(c.entries, func(e EpochEntry) bool {
		return e.Epoch >= epoch || e.StartOffset >= startOffset
	})
	c.entries = append(c.entries, EpochEntry{epoch, startOffset})
	c.gen++
}

// EndOffsetFor answers Kafka's OffsetsForLeaderEpoch for requested, on a
// log that ends at logEnd: the largest epoch not above requested and the
// offset where it ends (the start of the next epoch, or logEnd for the
// latest). An epoch above every entry, or UndefinedEpoch, gives
// (UndefinedEpoch, UndefinedOffset). An epoch below every entry gives
// requested with the first entry's start: that data was removed from the
// log, and a follower may replicate from there (Kafka's comment on
// LeaderEpochFileCache.endOffsetFor).
func (c *EpochCache) EndOffsetFor(requested int32, logEnd int64) (int32, int64) {
	if requested == UndefinedEpoch || len(c.entries) == 0 {
		return UndefinedEpoch, UndefinedOffset
	}
	if c.Latest().Epoch == requested {
		return requested, logEnd
	}
	higher := slices.IndexFunc(c.entries, func(e EpochEntry) bool { return e.Epoch > requested })
	switch {
	case higher < 0:
		return UndefinedEpoch, UndefinedOffset
	case higher == 0:
		return requested, c.entries[0].StartOffset
	}
	return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
}

// TruncateFromEnd drops the entries of epochs that start at or after
// endOffset: the log was truncated to endOffset.
func (c *EpochCache) TruncateFromEnd(endOffset int64) {
	n := len(c.entries)
	c.entries = slices.DeleteFunc(c.entries, func(e EpochEntry) bool { return e.StartOffset >= endOffset })
	if len(c.entries) != n {
		c.gen++
	}
}

// TruncateFromStart drops the epochs that end at or before startOffset
// and moves the start of the epoch holding it up to startOffset: the
// log's start offset moved (retention, DeleteRecords).
func (c *EpochCache) TruncateFromStart(startOffset int64) {
	i := 0
	for i+1 < len(c.entries) && c.entries[i+1].StartOffset <= startOffset {
		i++
	}
	if i > 0 {
		c.entries, c.gen = c.entries[i:], c.gen+1
	}
	if len(c.entries) > 0 && c.entries[0].StartOffset < startOffset {
		c.entries[0].StartOffset = startOffset
		c.gen++
	}
}

// leader-epoch-checkpoint, Kafka's CheckpointFile format (version 0):
//
//	0                 version
//	<n>               number of entries
//	<epoch> <offset>  n lines, epochs and offsets increasing
//
// Written through write-temp, fsync, rename, fsync-directory by the log
// directory's owner. The format is Kafka's and must not change.
const epochCheckpointVersion = 0

// MarshalCheckpoint encodes the cache as a leader-epoch-checkpoint file.
func (c *EpochCache) MarshalCheckpoint() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", epochCheckpointVersion, len(c.entries))
	for _, e := range c.entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return b.Bytes()
}

// UnmarshalEpochCheckpoint decodes a leader-epoch-checkpoint file. A file
// whose version, count or lines do not parse, or whose entries do not
// increase, is an error (Kafka then rebuilds the cache from the log).
func UnmarshalEpochCheckpoint(data []byte) (*EpochCache, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := func() (string, bool) {
		ok := sc.Scan()
		return strings.TrimSpace(sc.Text()), ok
	}
	v, ok := line()
	if !ok || v != strconv.Itoa(epochCheckpointVersion) {
		return nil, fmt.Errorf("leader-epoch-checkpoint: version %q, want %d", v, epochCheckpointVersion)
	}
	n, ok := line()
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 0 {
		return nil, fmt.Errorf("leader-epoch-checkpoint: bad entry count %q", n)
	}
	c := &EpochCache{}
	for i := range count {
		l, ok := line()
		e, err := parseEpochEntry(l)
		if !ok || err != nil {
			return nil, fmt.Errorf("leader-epoch-checkpoint: entry %d of %d: %q", i+1, count, l)
		}
		if p := c.Latest(); len(c.entries) > 0 && (e.Epoch <= p.Epoch || e.StartOffset < p.StartOffset) {
			return nil, fmt.Errorf("leader-epoch-checkpoint: entry %d (%d %d) does not follow (%d %d)", i+1, e.Epoch, e.StartOffset, p.Epoch, p.StartOffset)
		}
		c.entries = append(c.entries, e)
	}
	return c, nil
}

func parseEpochEntry(l string) (EpochEntry, error) {
	f := strings.Fields(l)
	if len(f) != 2 {
		return EpochEntry{}, fmt.Errorf("want 2 fields")
	}
	e, err1 := strconv.ParseInt(f[0], 10, 32)
	o, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || e < 0 || o < 0 {
		return EpochEntry{}, fmt.Errorf("bad entry")
	}
	return EpochEntry{int32(e), o}, nil
}
