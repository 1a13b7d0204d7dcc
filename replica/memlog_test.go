package replica

import (
	"fmt"
	"slices"
	"strings"

	"github.com/varve/varve/record"
)

// memLog is a ReplicaLog in memory: whole batches with their offsets and
// epochs, truncated at batch boundaries as a segment.Log is.
type memLog struct {
	batches [][]byte
	start   int64
	end     int64
}

var _ ReplicaLog = (*memLog)(nil)

func (l *memLog) StartOffset() int64 { return l.start }
func (l *memLog) EndOffset() int64   { return l.end }

func (l *memLog) AppendAsLeader(b []byte, epoch int32) (int64, error) {
	for p := 0; p < len(b); {
		h, n, err := record.NextBatch(b[p:], len(b)-p)
		if err != nil {
			return -1, err
		}
		c := slices.Clone(b[p : p+n])
		record.SetBaseOffset(c, l.end)
		record.SetPartitionLeaderEpoch(c, epoch)
		l.batches = append(l.batches, c)
		l.end += int64(h.LastOffsetDelta) + 1
		p += n
	}
	return l.end - 1, nil
}

func (l *memLog) AppendAsFollower(b []byte) error {
	for p := 0; p < len(b); {
		h, n, err := record.NextBatch(b[p:], len(b)-p)
		if err != nil {
			return err
		}
		if h.BaseOffset != l.end {
			return fmt.Errorf("batch at %d does not continue the log at %d", h.BaseOffset, l.end)
		}
		l.batches = append(l.batches, slices.Clone(b[p:p+n]))
		l.end, p = h.NextOffset(), p+n
	}
	return nil
}

// TruncateTo drops every batch that holds an offset at or past offset.
func (l *memLog) TruncateTo(offset int64) error {
	l.batches = slices.DeleteFunc(l.batches, func(b []byte) bool { return header(b).LastOffset() >= offset })
	l.end = l.start
	if n := len(l.batches); n > 0 {
		l.end = header(l.batches[n-1]).NextOffset()
	}
	return nil
}

func (l *memLog) TruncateFullyAndStartAt(offset int64) error {
	l.batches, l.start, l.end = nil, offset, offset
	return nil
}

func (l *memLog) SetStartOffset(offset int64) error {
	l.start = offset
	l.batches = slices.DeleteFunc(l.batches, func(b []byte) bool { return header(b).LastOffset() < offset })
	return nil
}

// read returns the whole batches from offset that end before upTo.
func (l *memLog) read(from, upTo int64) []byte {
	var out []byte
	for _, b := range l.batches {
		if h := header(b); h.BaseOffset >= from && h.LastOffset() < upTo {
			out = append(out, b...)
		}
	}
	return out
}

// values lists "offset:value" for every record below upTo.
func (l *memLog) values(upTo int64) []string {
	var out []string
	for rec, err := range record.Records(l.read(l.start, upTo)) {
		if err != nil {
			return append(out, err.Error())
		}
		out = append(out, fmt.Sprintf("%d:%s", rec.Offset, rec.Value))
	}
	return out
}

// String is "[0-2@e1 3-3@e2]": each batch's offsets and epoch.
func (l *memLog) String() string {
	parts := make([]string, len(l.batches))
	for i, b := range l.batches {
		h := header(b)
		parts[i] = fmt.Sprintf("%d-%d@e%d", h.BaseOffset, h.LastOffset(), h.PartitionLeaderEpoch)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func header(b []byte) record.BatchHeader {
	h, _ := record.ParseHeader(b)
	return h
}
