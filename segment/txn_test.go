package segment_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// txnBatch builds a transactional batch of n records for producer pid.
func txnBatch(t testing.TB, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(pid, epoch, seq)
	bb.SetTransactional(true)
	for i := 0; i < n; i++ {
		bb.Append(record.Record{Key: []byte(fmt.Sprintf("t%d-%d-%d", pid, seq, i)), Value: []byte("v")})
	}
	b, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// txnProducer appends the transactional batches of one producer.
type txnProducer struct {
	pid   int64
	epoch int16
	seq   int32
}

func (p *txnProducer) send(t testing.TB, l *segment.Log, n int) segment.AppendInfo {
	t.Helper()
	info, err := l.AppendWithEpoch(txnBatch(t, p.pid, p.epoch, p.seq, n), 0)
	if err != nil {
		t.Fatalf("producer %d: %v", p.pid, err)
	}
	p.seq += int32(n)
	return info
}

func (p *txnProducer) end(t testing.TB, l *segment.Log, commit bool) segment.AppendInfo {
	t.Helper()
	info, err := l.AppendTxnMarker(segment.TxnMarker{ProducerID: p.pid, ProducerEpoch: p.epoch, CoordinatorEpoch: 3, Commit: commit}, 0)
	if err != nil {
		t.Fatalf("producer %d marker: %v", p.pid, err)
	}
	return info
}

func lso(l *segment.Log) int64 { return l.LastStableOffset(l.EndOffset()) }

// Kafka: ProducerStateManager.firstUnstableOffset / UnifiedLog
// .lastStableOffset. The LSO is the first offset of the earliest open
// transaction, the log end offset when none is open; a marker moves it.
func TestLastStableOffsetFollowsOpenTransactions(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	appendN(t, l, 2, 1, 10, 1) // offsets 0, 1: no producer
	if got := lso(l); got != 2 {
		t.Fatalf("LSO with no transaction = %d, want the LEO 2", got)
	}
	a, b := &txnProducer{pid: 10}, &txnProducer{pid: 11}
	a.send(t, l, 3) // 2..4
	b.send(t, l, 2) // 5..6
	a.send(t, l, 1) // 7
	if got := lso(l); got != 2 {
		t.Fatalf("LSO = %d, want 2 (producer 10's first offset)", got)
	}
	if open := l.OngoingTransactions(); len(open) != 2 || open[0].ProducerID != 10 || open[0].CurrentTxnFirstOffset != 2 ||
		open[1].ProducerID != 11 || open[1].CurrentTxnFirstOffset != 5 {
		t.Fatalf("ongoing transactions %+v, want producer 10 from 2 and 11 from 5", open)
	}
	a.end(t, l, true) // 8
	if got := lso(l); got != 5 {
		t.Fatalf("LSO after 10 commits = %d, want 5 (producer 11's first offset)", got)
	}
	b.end(t, l, false) // 9
	if got := lso(l); got != 10 {
		t.Fatalf("LSO after both ended = %d, want the LEO 10", got)
	}
	if st, _ := l.ProducerState(11); st.CurrentTxnFirstOffset != -1 || st.CoordinatorEpoch != 3 {
		t.Fatalf("producer 11 after its abort: %+v", st)
	}
}

// Kafka: unreplicatedTxns. An ended transaction stays unstable until
// its marker is below the high watermark; the LSO never passes the high
// watermark.
func TestLastStableOffsetWaitsForTheMarkerToReplicate(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	a := &txnProducer{pid: 4}
	a.send(t, l, 2) // 0, 1
	a.end(t, l, true)
	if got := l.LastStableOffset(1); got != 0 {
		t.Fatalf("LSO with hw 1 = %d, want 0 (the commit at 2 is not replicated)", got)
	}
	if got := l.LastStableOffset(2); got != 0 {
		t.Fatalf("LSO with hw 2 = %d, want 0 (the marker at 2 is not below the hw)", got)
	}
	if got := l.LastStableOffset(3); got != 3 {
		t.Fatalf("LSO with hw 3 = %d, want 3", got)
	}
	appendN(t, l, 2, 1, 10, 1)
	if got := l.LastStableOffset(4); got != 4 {
		t.Fatalf("LSO with hw 4 = %d, want the hw", got)
	}
}

// Kafka: TransactionIndex, AbortedTxn (version 0, 34 bytes) and
// UnifiedLog.collectAbortedTransactions. An ABORT writes an entry whose
// last stable offset is the next open transaction's first offset.
func TestAbortWritesKafkasTxnIndexEntry(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	defer l.Close()
	a, b := &txnProducer{pid: 1}, &txnProducer{pid: 2}
	a.send(t, l, 2)    // 0, 1
	b.send(t, l, 1)    // 2
	a.end(t, l, false) // 3: abort, b still open from 2
	b.end(t, l, true)  // 4: commit, no entry
	c := &txnProducer{pid: 3}
	c.send(t, l, 1)    // 5
	c.end(t, l, false) // 6: abort, nothing open after it
	want := []segment.AbortedTxn{
		{ProducerID: 1, FirstOffset: 0, LastOffset: 3, LastStableOffset: 2},
		{ProducerID: 3, FirstOffset: 5, LastOffset: 6, LastStableOffset: 7},
	}
	if got := l.AbortedTransactions(0, l.EndOffset()); !slices.Equal(got, want) {
		t.Fatalf("aborted transactions = %+v, want %+v", got, want)
	}
	raw, err := os.ReadFile(filepath.Join(dir, segment.FilenamePrefix(0)+segment.TxnIndexSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var exp []byte
	for _, w := range want {
		exp = binary.BigEndian.AppendUint16(exp, 0)
		for _, v := range []int64{w.ProducerID, w.FirstOffset, w.LastOffset, w.LastStableOffset} {
			exp = binary.BigEndian.AppendUint64(exp, uint64(v))
		}
	}
	if !slices.Equal(raw, exp) {
		t.Fatalf(".txnindex bytes\n got %x\nwant %x", raw, exp)
	}
	if got := l.AbortedTransactions(4, 5); len(got) != 0 {
		t.Fatalf("range [4,5) overlaps no aborted transaction, got %+v", got)
	}
	if got := l.AbortedTransactions(1, 2); !slices.Equal(got, want[:1]) {
		t.Fatalf("range [1,2) = %+v, want the first abort only", got)
	}
	decoded, err := segment.DecodeTxnIndex(raw)
	if err != nil || !slices.Equal(decoded, want) {
		t.Fatalf("DecodeTxnIndex = %+v, %v", decoded, err)
	}
}

// Kafka: collectAbortedTxns searches later segments until an entry's
// last stable offset reaches the upper bound: an abort whose marker was
// written segments after its data is found from the data's segment.
func TestAbortedTransactionsFoundInLaterSegments(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	a := &txnProducer{pid: 9}
	a.send(t, l, 2) // 0, 1
	mustRoll(t, l)
	appendN(t, l, 1, 1, 10, 1) // 2
	mustRoll(t, l)
	a.end(t, l, false) // 3
	got := l.AbortedTransactions(0, 2)
	if len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 3 {
		t.Fatalf("aborted transactions for [0,2) = %+v", got)
	}
	if n := len(l.SegmentTxnIndex(3)); n != 1 {
		t.Fatalf("the entry is in the marker's segment: %d entries there", n)
	}
}

func mustRoll(t testing.TB, l *segment.Log) {
	t.Helper()
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
}

// Kafka: ProducerAppendInfo.appendEndTxnMarker's checks for a marker
// from the coordinator: an older producer epoch is INVALID_PRODUCER_EPOCH,
// an older coordinator epoch TRANSACTION_COORDINATOR_FENCED; nothing is
// written.
func TestMarkerEpochChecks(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	a := &txnProducer{pid: 5, epoch: 4}
	a.send(t, l, 1)
	end := l.EndOffset()
	_, err := l.AppendTxnMarker(segment.TxnMarker{ProducerID: 5, ProducerEpoch: 3, CoordinatorEpoch: 3, Commit: true}, 0)
	if !errors.Is(err, segment.ErrInvalidProducerEpoch) {
		t.Fatalf("older producer epoch: %v", err)
	}
	a.end(t, l, true) // coordinator epoch 3
	a.send(t, l, 1)
	_, err = l.AppendTxnMarker(segment.TxnMarker{ProducerID: 5, ProducerEpoch: 4, CoordinatorEpoch: 2, Commit: false}, 0)
	if !errors.Is(err, segment.ErrTransactionCoordinatorFenced) {
		t.Fatalf("older coordinator epoch: %v", err)
	}
	if l.EndOffset() != end+2 {
		t.Fatalf("refused markers were written: end %d", l.EndOffset())
	}
	if _, err := l.AppendWithEpoch(mustMarker(t, 5, 4), 0); err == nil {
		t.Fatal("a client appended a control batch")
	}
}

func mustMarker(t testing.TB, pid int64, epoch int16) []byte {
	t.Helper()
	b, err := segment.BuildTxnMarker(segment.TxnMarker{ProducerID: pid, ProducerEpoch: epoch, CoordinatorEpoch: 9})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Kafka: producer snapshots keep CurrentTxnFirstOffset, so an open
// transaction survives a clean restart and keeps holding the LSO.
func TestOpenTransactionSurvivesCleanReopen(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	a := &txnProducer{pid: 21}
	appendN(t, l, 3, 1, 10, 1)
	a.send(t, l, 2) // 3, 4
	appendN(t, l, 1, 1, 10, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	if got := lso(l); got != 3 {
		t.Fatalf("LSO after reopen = %d, want 3", got)
	}
	a.end(t, l, false)
	if got := l.AbortedTransactions(0, l.EndOffset()); len(got) != 1 || got[0].FirstOffset != 3 {
		t.Fatalf("abort after reopen: %+v", got)
	}
}

// abortInTwoSegments writes, over two segments, two aborted transactions
// and an open one, and returns the aborted ones.
func abortInTwoSegments(t *testing.T, l *segment.Log) []segment.AbortedTxn {
	a, b, c := &txnProducer{pid: 1}, &txnProducer{pid: 2}, &txnProducer{pid: 3}
	a.send(t, l, 2)    // 0, 1
	a.end(t, l, false) // 2
	mustRoll(t, l)
	b.send(t, l, 1)    // 3
	c.send(t, l, 1)    // 4
	b.end(t, l, false) // 5
	appendN(t, l, 1, 1, 10, 1)
	return []segment.AbortedTxn{
		{ProducerID: 1, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3},
		{ProducerID: 2, FirstOffset: 3, LastOffset: 5, LastStableOffset: 4},
	}
}

// Kafka: LogSegment.recover resets the transaction index and rebuilds
// it from the log with the producer state. After a crash, an index
// file lost with the page cache comes back from the log.
func TestTxnIndexRebuiltAfterCrash(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	want := abortInTwoSegments(t, l)
	l.Abandon()
	l.CloseFilesAbandoned()
	for _, base := range []int64{0, 3} {
		if err := os.Remove(filepath.Join(dir, segment.FilenamePrefix(base)+segment.TxnIndexSuffix)); err != nil {
			t.Fatal(err)
		}
	}
	// The recovery point checkpoint says nothing was flushed.
	if err := segment.WriteCheckpoint(segment.OSFS{}, filepath.Join(dir, segment.RecoveryPointCheckpointFile),
		map[segment.TopicPartition]int64{l.TopicPartition(): 0}); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	if got := l.AbortedTransactions(0, l.EndOffset()); !slices.Equal(got, want) {
		t.Fatalf("rebuilt aborted transactions = %+v, want %+v", got, want)
	}
	if got := lso(l); got != 4 {
		t.Fatalf("LSO after recovery = %d, want 4 (producer 3 still open)", got)
	}
}

// Kafka: the recovery truncates a torn marker; its transaction index
// entry goes with it and the transaction is open again.
func TestTornAbortMarkerDropsItsEntry(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	a := &txnProducer{pid: 8}
	a.send(t, l, 2)
	a.end(t, l, false) // 2
	l.Abandon()
	l.CloseFilesAbandoned()
	logPath := filepath.Join(dir, segment.FilenamePrefix(0)+segment.LogSuffix)
	fi, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(logPath, fi.Size()-5); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	if l.EndOffset() != 2 {
		t.Fatalf("end after the torn marker = %d, want 2", l.EndOffset())
	}
	if got := l.AbortedTransactions(0, 10); len(got) != 0 {
		t.Fatalf("entry of a torn marker survived: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, segment.FilenamePrefix(0)+segment.TxnIndexSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("txnindex of the torn marker still on disk: %v", err)
	}
	if got := lso(l); got != 0 {
		t.Fatalf("LSO = %d, want 0: the transaction is open again", got)
	}
}

// Kafka: UnifiedLog.truncateTo truncates the transaction indexes and
// reloads the producer state: a follower that loses an abort marker has
// the transaction open again.
func TestTruncateDropsTxnIndexEntries(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	defer l.Close()
	want := abortInTwoSegments(t, l)
	if err := l.TruncateTo(5); err != nil {
		t.Fatal(err)
	}
	if got := l.AbortedTransactions(0, l.EndOffset()); !slices.Equal(got, want[:1]) {
		t.Fatalf("after truncating to 5: %+v, want %+v", got, want[:1])
	}
	if got := lso(l); got != 3 {
		t.Fatalf("LSO after truncation = %d, want 3", got)
	}
	if err := l.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if got := l.AbortedTransactions(0, l.EndOffset()); len(got) != 0 {
		t.Fatalf("after truncating to 2: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, segment.FilenamePrefix(3)+segment.TxnIndexSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the truncated segment's txnindex is still live: %v", err)
	}
}

// Kafka: a segment's .txnindex is deleted with it (retention) and the
// entries of later segments stay.
func TestTxnIndexDeletedWithItsSegment(t *testing.T) {
	dir := t.TempDir()
	cfg := quietConfig()
	cfg.FileDeleteDelay = 0
	l := open(t, dir, cfg)
	defer l.Close()
	want := abortInTwoSegments(t, l)
	if _, err := l.DeleteSegmentsBefore(3); err != nil {
		t.Fatal(err)
	}
	if got := l.AbortedTransactions(3, l.EndOffset()); !slices.Equal(got, want[1:]) {
		t.Fatalf("after deleting the first segment: %+v", got)
	}
	l.Close()
	if _, err := os.Stat(filepath.Join(dir, segment.FilenamePrefix(0)+segment.TxnIndexSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("deleted segment's txnindex remains: %v", err)
	}
}

// Kafka: TransactionIndex.sanityCheck. A txnindex cut mid-entry keeps its
// whole entries and the rest is rebuilt from the log.
func TestCorruptTxnIndexIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	want := abortInTwoSegments(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, segment.FilenamePrefix(3)+segment.TxnIndexSuffix)
	if err := os.Truncate(p, 20); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	if got := l.AbortedTransactions(0, l.EndOffset()); !slices.Equal(got, want) {
		t.Fatalf("after a cut txnindex: %+v, want %+v", got, want)
	}
}
