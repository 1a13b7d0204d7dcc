package logdir

import (
	"errors"
	"sort"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// catchUp copies into fut the batches cur holds past fut's end, about
// limit bytes at most, and returns how many bytes it copied. Batches go
// in verbatim with AppendReplicated: offsets, leader epochs, timestamps
// and producer fields stay as they are, and the future rebuilds its
// producer state and transaction index from them, as a follower does.
//
// Before copying it makes fut a prefix of cur again when cur moved under
// it: retention or DeleteRecords raised cur's start past fut's end, or a
// follower's truncation replaced cur's tail (Kafka's alter-log-dirs
// thread truncates its future log the same way).
func catchUp(cur, fut *segment.Log, limit int) (int, error) {
	if err := alignFuture(cur, fut); err != nil {
		return 0, err
	}
	read := 0
	for read < limit {
		from := fut.EndOffset()
		if from >= cur.EndOffset() {
			return read, nil
		}
		// From the batch holding cur's start when that is past fut's end
		// (a start offset inside a batch the future holds from its base).
		b, err := cur.ReadBytes(max(from, cur.StartOffset()), limit-read)
		if errors.Is(err, segment.ErrOffsetOutOfRange) {
			return read, restartFuture(cur, fut) // the start passed from meanwhile
		}
		if err != nil {
			return read, err
		}
		if len(b) == 0 {
			return read, nil
		}
		if _, err := fut.AppendReplicated(b); errors.Is(err, segment.ErrNonContiguous) {
			return read, restartFuture(cur, fut)
		} else if err != nil {
			return read, err
		}
		read += len(b)
	}
	return read, nil
}

// alignFuture makes fut a prefix of cur: it restarts fut when cur's
// start passed fut's end, cuts fut back to cur's end, and restarts it
// when their last batches differ. By Kafka's leader-epoch rule two logs
// whose batches at one offset carry the same epoch (and here the same
// CRC) hold the same batches below it, so comparing the last batch is
// enough.
func alignFuture(cur, fut *segment.Log) error {
	if fut.EndOffset() < cur.StartOffset() || fut.EndOffset() == fut.StartOffset() {
		return restartFuture(cur, fut)
	}
	if end := cur.EndOffset(); fut.EndOffset() > end {
		if err := fut.TruncateTo(end); err != nil {
			return err
		}
	}
	if fut.EndOffset() == fut.StartOffset() {
		return restartFuture(cur, fut)
	}
	same, err := sameBatchAt(cur, fut, fut.EndOffset()-1)
	if err != nil || !same {
		return restartFuture(cur, fut)
	}
	return nil
}

// restartFuture empties fut and starts it at the base of cur's first
// batch (cur's start offset may fall inside a batch).
func restartFuture(cur, fut *segment.Log) error {
	start := cur.EndOffset()
	if b, err := cur.ReadBytes(cur.StartOffset(), 1); err == nil && len(b) > 0 {
		if h, err := record.ParseHeader(b); err == nil {
			start = h.BaseOffset
		}
	} else if err != nil && !errors.Is(err, segment.ErrOffsetOutOfRange) {
		return err
	}
	if fut.StartOffset() == start && fut.EndOffset() == start {
		return nil
	}
	return fut.TruncateFullyAndStartAt(start)
}

// sameBatchAt says whether the batches holding offset in a and b are
// the same batch: base and last offsets, leader epoch and CRC.
func sameBatchAt(a, b *segment.Log, offset int64) (bool, error) {
	ha, err := batchAt(a, offset)
	if err != nil {
		return false, err
	}
	hb, err := batchAt(b, offset)
	if err != nil {
		return false, err
	}
	return ha.BaseOffset == hb.BaseOffset && ha.LastOffsetDelta == hb.LastOffsetDelta &&
		ha.PartitionLeaderEpoch == hb.PartitionLeaderEpoch && ha.CRC == hb.CRC, nil
}

func batchAt(l *segment.Log, offset int64) (record.BatchHeader, error) {
	buf, err := l.ReadBytes(offset, 1)
	if err != nil {
		return record.BatchHeader{}, err
	}
	if len(buf) == 0 {
		return record.BatchHeader{}, segment.ErrOffsetOutOfRange
	}
	return record.ParseHeader(buf)
}

func sortFutures(fs []FutureLog) {
	sort.Slice(fs, func(i, j int) bool { return lessTP(fs[i].TP, fs[j].TP) })
}
