package txn

import (
	"errors"
	"fmt"
	"time"

	"github.com/varve/varve/record"
)

// Loading rebuilds a partition's transactions from its records (Kafka's
// loadTransactionsForTxnTopicPartition): the last record of each key
// wins and a tombstone removes it, exactly what compaction keeps.
// Transactions found in PrepareCommit or PrepareAbort have their markers
// sent again, and complete when they are written; ongoing ones carry on
// and time out as before the load.

// loader accumulates a partition's records during a load.
type loader struct {
	txns    map[string]*meta
	next    int64 // offset after the last batch read
	records int
	skipped int // records that are not a transaction's, or undecodable
}

// LoadReport says what a load read.
type LoadReport struct {
	Records, Skipped, Transactions, Pending int
}

// BeginLoad drops whatever the coordinator holds and starts loading as
// coordinator epoch epoch (the partition's leader epoch): requests get
// COORDINATOR_LOAD_IN_PROGRESS until FinishLoad.
func (c *Coordinator) BeginLoad(epoch int32) {
	c.Stop()
	c.status, c.epoch = loading, epoch
	c.load = &loader{txns: map[string]*meta{}}
}

// Load replays buf, whole record batches as the partition's log holds
// them, and returns the offset after the last one. A batch that fails
// its CRC is an error: the log's own recovery should have cut it.
func (c *Coordinator) Load(buf []byte) (int64, error) {
	ld := c.load
	if ld == nil {
		return 0, errors.New("txn: Load without BeginLoad")
	}
	var recs []record.Record
	for pos := 0; pos < len(buf); {
		h, n, err := record.NextBatch(buf[pos:], len(buf)-pos)
		if err != nil {
			return ld.next, fmt.Errorf("%s-%d at byte %d: %w", Topic, c.partition, pos, err)
		}
		batch := buf[pos : pos+n]
		pos += n
		ld.next = h.NextOffset()
		if h.IsControl() {
			ld.skipped += int(h.RecordCount)
			continue
		}
		if recs, err = record.DecodeBatch(batch, recs); err != nil {
			return ld.next, fmt.Errorf("%s-%d batch at offset %d: %w", Topic, c.partition, h.BaseOffset, err)
		}
		for _, r := range recs {
			ld.replay(r.Key, r.Value)
		}
	}
	return ld.next, nil
}

func (ld *loader) replay(k, v []byte) {
	ld.records++
	id, m, ok := decode(k, v)
	switch {
	case !ok:
		ld.skipped++
	case m == nil || m.state == Dead:
		delete(ld.txns, id)
	default:
		ld.txns[id] = m
	}
}

// FinishLoad installs what was loaded, starts serving, and sends the
// markers of the transactions left preparing.
func (c *Coordinator) FinishLoad(now time.Time) LoadReport {
	c.now = now
	ld := c.load
	c.load = nil
	if ld == nil || c.status != loading {
		return LoadReport{} // stopped while loading
	}
	c.txns, c.status = ld.txns, active
	c.nextAbortCheck = now.Add(c.cfg.AbortCheckInterval)
	c.nextExpireCheck = now.Add(c.cfg.ExpireCheckInterval)
	rep := LoadReport{Records: ld.records, Skipped: ld.skipped, Transactions: len(ld.txns)}
	for _, id := range c.sortedIDs() {
		if m := c.txns[id]; m.state.preparing() {
			rep.Pending++
			c.sendMarkers(m)
		}
	}
	return rep
}
