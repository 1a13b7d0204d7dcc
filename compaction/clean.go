package compaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Clean runs one cleaning pass over l at time now, whatever its dirty
// ratio (the Cleaner uses the ratio to choose among logs): it builds the
// offset map over the dirty section, rewrites every sealed segment below
// the map's end in groups, swaps the groups in crash-safely and records
// the next first dirty offset in the cleaner-offset-checkpoint. Doc.go
// has the rules. The offset map takes at most cfg.DedupeBufferSize /
// cfg.Threads bytes, sized down to what the dirty section can need.
//
// Clean applies no retention; the Cleaner does for compact,delete logs.
// At most one pass runs on a log at a time: a second gets
// ErrCleaningInProgress.
func Clean(l *segment.Log, cfg Config, now time.Time) (Stats, error) {
	cfg, err := cfg.checked()
	if err != nil {
		return Stats{Dir: l.Dir()}, err
	}
	w := newWorker(cfg, newThrottler(cfg.MaxIOBytesPerSecond, nil))
	return w.clean(context.Background(), l, cfg.TopicConfig, now)
}

// worker is one cleaner thread's reusable state.
type worker struct {
	cfg      Config
	th       *throttler
	m        *OffsetMap
	rd       *batchReader
	dec      record.BatchDecoder
	recs     []record.Record
	kept     []record.Record
	keys     []keyRec
	verdicts []verdict
	hashes   keyHashes
	scratch  []byte
}

func newWorker(cfg Config, th *throttler) *worker {
	return &worker{cfg: cfg, th: th, m: NewOffsetMap(cfg.mapBytesPerThread())}
}

// pass is one cleaning of one log.
type pass struct {
	ctx          context.Context
	w            *worker
	c            logToClean
	topic        TopicConfig
	fs           segment.FS
	segmentBytes int64
	nowMs        int64
	latest       int64           // the last offset the map accounts for (Kafka's map.latestOffset)
	producers    map[int64]int64 // producer id -> last data offset, read when first needed
	rangeEnd     bool            // the batch filter returned last is kept only as the group's end
	stats        *Stats

	txns      *txnState           // the group being rewritten (txn.go)
	mapTxns   *txnState           // the dirty section, for the offset map
	keepEntry *segment.AbortedTxn // the index entry of the ABORT filter returned last, if kept
}

// inProgress holds the logs being cleaned or retained by any worker.
var inProgress = struct {
	sync.Mutex
	logs map[*segment.Log]bool
}{logs: map[*segment.Log]bool{}}

func acquire(l *segment.Log) bool {
	inProgress.Lock()
	defer inProgress.Unlock()
	if inProgress.logs[l] {
		return false
	}
	inProgress.logs[l] = true
	return true
}

func release(l *segment.Log) {
	inProgress.Lock()
	delete(inProgress.logs, l)
	inProgress.Unlock()
}

// clean examines l and cleans it.
func (w *worker) clean(ctx context.Context, l *segment.Log, t TopicConfig, now time.Time) (Stats, error) {
	if !acquire(l) {
		return Stats{Dir: l.Dir()}, fmt.Errorf("%s: %w", l.Dir(), ErrCleaningInProgress)
	}
	defer release(l)
	return w.cleanExamined(ctx, examine(l, t, w.cfg.UpperBound(l), now), t, now)
}

// cleanExamined is Kafka's Cleaner.doClean on a log already examined.
// REQUIRES l acquired.
func (w *worker) cleanExamined(ctx context.Context, c logToClean, t TopicConfig, now time.Time) (Stats, error) {
	began := time.Now()
	stats := Stats{Dir: c.log.Dir(), FirstDirty: c.firstDirty, FirstUncleanable: c.firstUncleanable, EndOffset: c.firstDirty}
	if c.firstDirty >= c.firstUncleanable {
		return stats, nil
	}
	if w.rd == nil {
		w.rd = newBatchReader(w.cfg.readBufferPerThread(), w.th)
	}
	w.rd.ctx = ctx
	p := &pass{ctx: ctx, w: w, c: c, topic: t, fs: c.log.Config().FS, segmentBytes: c.log.Config().SegmentBytes,
		nowMs: now.UnixMilli(), stats: &stats}
	err := p.run()
	stats.Duration = time.Since(began)
	return stats, err
}

// run builds the map, rewrites the groups and checkpoints.
func (p *pass) run() error {
	if err := p.buildMap(); err != nil {
		return err
	}
	p.recordMap()
	if p.latest < p.c.firstDirty {
		if p.stats.MapFull {
			return fmt.Errorf("%s: %w (%d bytes)", p.c.log.Dir(), ErrMapTooSmall, p.w.m.MemoryBytes())
		}
		return nil // the dirty section holds no batch
	}
	end := p.latest + 1
	p.stats.EndOffset = end
	for _, g := range groupSegments(toRewrite(p.c.segs, p.c.log.StartOffset(), end), p.segmentBytes) {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		if err := p.cleanGroup(g); err != nil {
			return err
		}
	}
	return writeFirstDirty(p.c.log, end)
}

func (p *pass) recordMap() {
	m := p.w.m
	p.stats.MapKeys, p.stats.MapUtilization = m.Size(), m.Utilization()
	p.stats.MapMemory, p.stats.ProbesPerLookup = m.MemoryBytes(), m.ProbesPerLookup()
}

// cleanGroup is Kafka's Cleaner.cleanSegments: it copies what stays of
// the group's segments into cleaned segments and swaps them in.
func (p *pass) cleanGroup(group []segment.SegmentInfo) error {
	out := &output{p: p, base: group[0].BaseOffset}
	lastIdx := lastNonEmpty(group)
	p.txns = newTxnState()
	for i, s := range group {
		p.txns.add(p.c.log.AbortedTransactions(s.BaseOffset, s.NextOffset))
		if err := p.cleanSegment(s, i == lastIdx, out); err != nil {
			out.abort()
			return err
		}
	}
	return out.swap(group)
}

// cleanSegment filters one segment's batches into out. last says whether
// it is the group's last segment, whose last batch always stays.
func (p *pass) cleanSegment(s segment.SegmentInfo, last bool, out *output) error {
	rd := p.w.rd
	if err := rd.open(p.fs, s); err != nil {
		return err
	}
	defer rd.close()
	p.stats.SegmentsRead++
	p.stats.BytesRead += s.Size
	for {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		h, b, pos, err := rd.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p.rangeEnd, p.keepEntry = false, nil
		kept, err := p.filter(h, b, last && pos+int64(len(b)) == s.Size)
		if err != nil {
			return err
		}
		if kept != nil {
			if err := out.append(h, kept, p.rangeEnd); err != nil {
				return err
			}
		}
		if p.keepEntry != nil && kept != nil {
			if err := out.current().AppendAbortedTxn(*p.keepEntry); err != nil {
				return fmt.Errorf("%s: cleaned segment %d: %w", p.c.log.Dir(), out.current().BaseOffset(), err)
			}
		}
	}
}
