package logdir_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// holder follows a partition's log the way the layer above does: nil
// while the manager says it is offline, the new one when it is moved.
type holder struct {
	l     atomic.Pointer[segment.Log]
	moved atomic.Int32
}

func (h *holder) watch(c *logdir.Config) {
	c.OnOffline = func([]segment.TopicPartition) { h.l.Store(nil) }
	c.OnMoved = func(pl logdir.PartitionLog) { h.l.Store(pl.Log); h.moved.Add(1) }
}

func smallSegments(c *logdir.Config) {
	c.Logger = slog.New(slog.DiscardHandler)
	c.LogConfig = func(string) segment.Config {
		c := segment.DefaultConfig()
		c.SegmentBytes, c.FlushMessages = 4096, 1
		return c
	}
}

func abs(t *testing.T, dir string) string {
	t.Helper()
	a, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// waitMoved waits until no move is under way.
func waitMoved(t *testing.T, m *logdir.Manager) {
	t.Helper()
	eventually(t, "the move to end", func() bool { return len(m.Futures()) == 0 })
}

// Kafka: ReplicaManager.alterReplicaLogDirs and the
// ReplicaAlterLogDirsThread: a partition moves to another log dir while
// its log keeps taking appends; the moved log holds every acknowledged
// batch byte for byte, at the same offsets, and the old directory is
// gone.
func TestAlterLogDirMovesUnderAppends(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	var h holder
	m := openManager(t, []string{d1, d2}, smallSegments, h.watch)
	defer m.Close()
	pl, err := m.Create(tp("mv", 0), logdir.TopicID{7})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(pl.Log.Dir()) != d1 {
		t.Fatalf("created in %s", pl.Log.Dir())
	}
	h.l.Store(pl.Log)
	appendN(t, pl.Log, 200) // many sealed segments to copy

	acked := map[int64][]byte{}
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a producer that retries while the partition is offline
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			l := h.l.Load()
			if l == nil {
				continue
			}
			b := segmenttest.Batch(t, 3, 100, int64(1000+i), int64(1_700_000_000_000+i))
			info, err := l.Append(b)
			if err != nil {
				continue // closed under the swap: not acknowledged, sent again
			}
			mu.Lock()
			acked[info.FirstOffset] = b
			mu.Unlock()
		}
	}()
	if err := m.AlterLogDir(tp("mv", 0), abs(t, d2)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the swap", func() bool { return h.moved.Load() > 0 })
	close(stop)
	<-done
	waitMoved(t, m)

	moved, ok := m.Get(tp("mv", 0))
	if !ok || filepath.Dir(moved.Log.Dir()) != d2 || moved.TopicID != (logdir.TopicID{7}) {
		t.Fatalf("after the move: %v %v", moved, ok)
	}
	if moved.Log != h.l.Load() {
		t.Fatal("the layer above was not handed the moved log")
	}
	if _, err := os.Stat(filepath.Join(d1, "mv-0")); !os.IsNotExist(err) {
		t.Errorf("old dir still there: %v", err)
	}
	eventually(t, "the -delete dir removed", func() bool { return len(dirNames(t, d1, "mv-0")) == 0 })
	if len(acked) == 0 {
		t.Fatal("nothing was appended during the move")
	}
	for off, b := range acked {
		got, err := moved.Log.ReadBytes(off, 1)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		got = segmenttest.Batches(t, got)[0]
		if !bytes.Equal(got, b) { // b had its base offset written in place by Append
			t.Fatalf("batch at %d differs after the move", off)
		}
	}
	if n := countBatches(t, moved.Log); n != 200+len(acked) {
		t.Fatalf("%d batches after the move, want %d", n, 200+len(acked))
	}
}

// checkCrashedMove checks c-0 after a crash: served, every batch there.
func checkCrashedMove(t *testing.T, m *logdir.Manager, crashAt, batches int) logdir.PartitionLog {
	t.Helper()
	got, ok := m.Get(tp("c", 0))
	if !ok {
		t.Fatalf("crash at step %d: partition gone", crashAt)
	}
	if n := countBatches(t, got.Log); n != batches {
		t.Fatalf("crash at step %d: %d batches, want %d", crashAt, n, batches)
	}
	return got
}

// dirNames lists the entries of dir whose names start with prefix.
func dirNames(t *testing.T, dir, prefix string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// Kafka: alterReplicaLogDirs answers LOG_DIR_NOT_FOUND for a directory
// that is not one of log.dirs (absolute paths compared), nothing for a
// partition already there, and REPLICA_NOT_AVAILABLE for a partition
// the broker holds no replica of, remembering the directory for when it
// is created (LogManager.maybeUpdatePreferredLogDir).
func TestAlterLogDirErrors(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	m := openManager(t, []string{d1, d2}, smallSegments)
	defer m.Close()
	if _, err := m.Create(tp("e", 0), logdir.TopicID{1}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(d2, "x"), "relative", d2 + "/"} {
		if err := m.AlterLogDir(tp("e", 0), dir); !errors.Is(err, logdir.ErrLogDirNotFound) {
			t.Errorf("dir %q: %v, want ErrLogDirNotFound", dir, err)
		}
	}
	if err := m.AlterLogDir(tp("e", 0), d1); err != nil || len(m.Futures()) != 0 {
		t.Errorf("to its own dir: %v, futures %v", err, m.Futures())
	}
	if err := m.AlterLogDir(tp("later", 0), d1); !errors.Is(err, logdir.ErrUnknownPartition) {
		t.Errorf("unknown partition: %v", err)
	}
	// d1 holds a partition, d2 none: only the remembered dir sends the
	// new partition to d1.
	pl, err := m.Create(tp("later", 0), logdir.TopicID{2})
	if err != nil || filepath.Dir(pl.Log.Dir()) != d1 {
		t.Fatalf("created in %s (%v), want the dir AlterLogDir named", pl.Log.Dir(), err)
	}
	pl, err = m.Create(tp("other", 0), logdir.TopicID{3})
	if err != nil || filepath.Dir(pl.Log.Dir()) != d2 {
		t.Fatalf("next partition created in %s (%v), want the least loaded dir", pl.Log.Dir(), err)
	}
}

// Kafka: LogDirFailureChannel: no future log is made while a log dir is
// offline (KAFKA_STORAGE_ERROR).
func TestAlterLogDirOfflineDir(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	full := &diskFullFS{FS: segment.OSFS{}, dir: d2}
	m := openManager(t, []string{d1, d2}, smallSegments, func(c *logdir.Config) { c.FS = full; c.ProbeInterval = time.Hour })
	defer m.Close()
	if _, err := m.Create(tp("o", 0), logdir.TopicID{1}); err != nil {
		t.Fatal(err)
	}
	full.full.Store(true)
	if _, err := m.Create(tp("o", 1), logdir.TopicID{1}); err == nil {
		t.Fatal("create on a full disk succeeded")
	}
	eventually(t, "d2 offline", func() bool { return len(m.OfflineDirs()) == 1 })
	if err := m.AlterLogDir(tp("o", 0), d2); !errors.Is(err, logdir.ErrOffline) {
		t.Errorf("to an offline dir: %v, want ErrOffline", err)
	}
}

// Kafka: LogManager.replaceCurrentWithFutureLog, the load of -future
// and -delete directories, and the broker resuming its future replicas.
// A move stopped after each of its steps, then the manager reopened,
// leaves exactly one copy of the partition with every acknowledged
// batch: in the source until the source is renamed -delete, in the
// destination from then on; ResumeMoves then finishes the move.
func TestMoveStoppedAtEachStepReopens(t *testing.T) {
	const batches = 60
	for step := logdir.StepFutureCreated; step <= logdir.StepSwapped; step++ {
		d1, d2 := t.TempDir(), t.TempDir()
		m := openManager(t, []string{d1, d2}, smallSegments)
		pl, err := m.Create(tp("k", 0), logdir.TopicID{9})
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, pl.Log, batches)
		m.SetMoveHook(func(_ segment.TopicPartition, s logdir.MoveStep) bool { return s != step })
		if err := m.AlterLogDir(tp("k", 0), d2); err != nil {
			t.Fatal(err)
		}
		waitMoved(t, m)
		m.Close()

		r := openManager(t, []string{d1, d2}, smallSegments)
		want := d1
		if step >= logdir.StepSourceRenamed {
			want = d2
		}
		checkOneCopy(t, r, step, want, batches)
		r.ResumeMoves()
		waitMoved(t, r)
		checkOneCopy(t, r, step, d2, batches)
		eventually(t, "no dir of the move left", func() bool {
			return len(dirNames(t, d1, "k-0"))+len(dirNames(t, d2, "k-0")) == 1
		})
		r.Close()
	}
}

// checkOneCopy checks that k-0 is served from dir want with every batch.
func checkOneCopy(t *testing.T, m *logdir.Manager, step logdir.MoveStep, want string, batches int) {
	t.Helper()
	got, ok := m.Get(tp("k", 0))
	if !ok {
		t.Fatalf("stopped after step %d: partition gone", step)
	}
	if filepath.Dir(got.Log.Dir()) != want {
		t.Errorf("stopped after step %d: partition in %s, want %s", step, got.Log.Dir(), want)
	}
	if n := countBatches(t, got.Log); n != batches || got.Log.EndOffset() != int64(2*batches) {
		t.Errorf("stopped after step %d: %d batches ending at %d", step, n, got.Log.EndOffset())
	}
	if got.TopicID != (logdir.TopicID{9}) {
		t.Errorf("stopped after step %d: topic id %v", step, got.TopicID)
	}
}

// Kafka refuses to start with a partition in two log dirs
// (LogManager.loadLog: "Duplicate log directories"); a move never
// leaves that, an operator's copy may.
func TestPartitionInTwoDirsRefused(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	m := openManager(t, []string{d1}, smallSegments)
	pl, _ := m.Create(tp("dup", 0), logdir.TopicID{1})
	appendN(t, pl.Log, 3)
	m.Close()
	segmenttest.CopyDir(t, filepath.Join(d1, "dup-0"), filepath.Join(d2, "dup-0"))
	_, err := logdir.Open(logdir.Config{LogDirs: []string{d1, d2}, Logger: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "dup-0") {
		t.Fatalf("open with dup-0 in both dirs: %v", err)
	}
}

// A crash at every file operation of a move (each write, fsync, rename
// and removal, a write cut in half, then everything not fsynced lost)
// leaves, after a restart, the partition served with every acknowledged
// batch, before and after the move resumes, and one directory of it in
// the end, whose cleaner-offset-checkpoint holds the partition's first
// dirty offset (Kafka: alterCheckpointDir).
func TestMoveCrashAtEveryStep(t *testing.T) {
	const batches = 12
	for crashAt := 0; ; crashAt++ {
		d1, d2 := t.TempDir(), t.TempDir()
		fault := segmenttest.NewFaultFS()
		fs := newStepFS(fault, -1)
		m := openManager(t, []string{d1, d2}, smallSegments, func(c *logdir.Config) { c.FS = fs })
		pl, err := m.Create(tp("c", 0), logdir.TopicID{4})
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, pl.Log, batches) // flush.messages=1: acknowledged means fsynced
		if err := compaction.SetFirstDirtyIn(fs, d1, tp("c", 0), 5, true); err != nil {
			t.Fatal(err)
		}
		fs.mu.Lock()
		fs.crashAt, fs.n, fs.steps = crashAt, 0, nil
		fs.mu.Unlock()
		if err := m.AlterLogDir(tp("c", 0), d2); err != nil {
			t.Fatal(err)
		}
		waitMoved(t, m)
		fs.mu.Lock()
		completed := fs.n <= crashAt
		steps := fs.n
		fs.mu.Unlock()
		m.Close()
		if err := fault.Crash(); err != nil {
			t.Fatal(err)
		}
		r := openManager(t, []string{d1, d2}, smallSegments)
		checkCrashedMove(t, r, crashAt, batches)
		r.ResumeMoves()
		waitMoved(t, r)
		got := checkCrashedMove(t, r, crashAt, batches)
		if cp := cleanerCheckpoint(t, filepath.Dir(got.Log.Dir())); cp[tp("c", 0)] != 5 {
			t.Fatalf("crash at step %d: the cleaner checkpoint of %s holds %v, want c-0 at 5", crashAt, filepath.Dir(got.Log.Dir()), cp)
		}
		eventually(t, "one directory of c-0", func() bool {
			return len(dirNames(t, d1, "c-0"))+len(dirNames(t, d2, "c-0")) == 1
		})
		r.Close()
		if completed {
			if filepath.Dir(got.Log.Dir()) != d2 {
				t.Fatalf("a move without a crash left the partition in %s", got.Log.Dir())
			}
			t.Logf("the move crashed at each of its %d steps", steps)
			break
		}
	}
}

// Kafka: a future log copies the current log's batches verbatim, so the
// moved log answers read_committed readers the same: its transaction
// index holds the same aborted transactions.
func TestMoveKeepsAbortedTransactions(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	var h holder
	m := openManager(t, []string{d1, d2}, smallSegments, h.watch)
	defer m.Close()
	pl, err := m.Create(tp("tx", 0), logdir.TopicID{5})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, pl.Log, 5)
	b := txnBatch(t, 77, 0)
	if _, err := pl.Log.Append(b); err != nil {
		t.Fatal(err)
	}
	if _, err := pl.Log.AppendTxnMarker(segment.TxnMarker{ProducerID: 77, Commit: false}, 0); err != nil {
		t.Fatal(err)
	}
	appendN(t, pl.Log, 5)
	want := pl.Log.AbortedTransactions(0, pl.Log.EndOffset())
	if len(want) != 1 {
		t.Fatalf("aborted before the move: %v", want)
	}
	if err := m.AlterLogDir(tp("tx", 0), d2); err != nil {
		t.Fatal(err)
	}
	waitMoved(t, m)
	moved, _ := m.Get(tp("tx", 0))
	got := moved.Log.AbortedTransactions(0, moved.Log.EndOffset())
	if len(got) != 1 || got[0] != want[0] {
		t.Fatalf("aborted after the move: %v, want %v", got, want)
	}
}

func txnBatch(t *testing.T, pid int64, seq int32) []byte {
	t.Helper()
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(pid, 0, seq)
	bb.SetTransactional(true)
	bb.Append(record.Record{Value: []byte("in a transaction")})
	b, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func producerBatch(t *testing.T, pid int64, seq int32, n int) []byte {
	t.Helper()
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(pid, 0, seq)
	for i := 0; i < n; i++ {
		bb.Append(record.Record{Value: []byte("idempotent")})
	}
	b, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Kafka: the future log is a replica of the current one: its producer
// state (the last batches of each idempotent producer, kept in producer
// snapshots), its log start offset (DeleteRecords) and its offsets move
// with it. A producer's retry of its last batch after the move is still
// recognised, before and after a restart, and the destination's
// checkpoint files hold the partition while the source's no longer do.
func TestMoveKeepsProducerStateStartOffsetAndCheckpoints(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	var h holder
	m := openManager(t, []string{d1, d2}, smallSegments, h.watch)
	pl, err := m.Create(tp("ps", 0), logdir.TopicID{6})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, pl.Log, 30)
	for seq := int32(0); seq < 10; seq += 2 {
		if _, err := pl.Log.Append(producerBatch(t, 42, seq, 2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pl.Log.SetStartOffset(13); err != nil {
		t.Fatal(err)
	}
	end := pl.Log.EndOffset()
	if err := m.AlterLogDir(tp("ps", 0), d2); err != nil {
		t.Fatal(err)
	}
	waitMoved(t, m)
	moved, _ := m.Get(tp("ps", 0))
	if moved.Log.StartOffset() != 13 || moved.Log.EndOffset() != end {
		t.Fatalf("moved log [%d, %d), want [13, %d)", moved.Log.StartOffset(), moved.Log.EndOffset(), end)
	}
	checkRetryIsDuplicate(t, moved.Log, end)
	for dir, want := range map[string]bool{d1: false, d2: true} {
		for _, name := range []string{segment.RecoveryPointCheckpointFile, segment.LogStartOffsetCheckpointFile} {
			cp, err := segment.ReadCheckpoint(nil, filepath.Join(dir, name))
			if _, has := cp[tp("ps", 0)]; err != nil || has != want {
				t.Errorf("%s in %s: %v (%v), want the partition %v", name, dir, cp, err, want)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	r := openManager(t, []string{d1, d2}, smallSegments)
	defer r.Close()
	again, _ := r.Get(tp("ps", 0))
	if again.Log.StartOffset() != 13 || filepath.Dir(again.Log.Dir()) != d2 {
		t.Fatalf("after a restart: start %d in %s", again.Log.StartOffset(), again.Log.Dir())
	}
	checkRetryIsDuplicate(t, again.Log, end)
}

// checkRetryIsDuplicate appends producer 42's last batch again: it must
// be answered as the duplicate it is.
func checkRetryIsDuplicate(t *testing.T, l *segment.Log, end int64) {
	t.Helper()
	info, err := l.Append(producerBatch(t, 42, 8, 2))
	if err != nil || !info.Duplicate || info.FirstOffset != end-2 {
		t.Fatalf("retry of the last batch: %+v %v, want a duplicate at %d", info, err, end-2)
	}
}

// Kafka: the checkpoint files of a log dir include the future logs in
// it (LogManager's logsByDir holds both): a move stopped once its future
// is complete has the destination's recovery point checkpoint name the
// partition at the future's end.
func TestFutureLogInDestinationCheckpoints(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	m := openManager(t, []string{d1, d2}, smallSegments)
	pl, err := m.Create(tp("cp", 0), logdir.TopicID{8})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, pl.Log, 20)
	m.SetMoveHook(func(_ segment.TopicPartition, s logdir.MoveStep) bool { return s != logdir.StepFutureComplete })
	if err := m.AlterLogDir(tp("cp", 0), d2); err != nil {
		t.Fatal(err)
	}
	waitMoved(t, m)
	cp, err := segment.ReadCheckpoint(nil, filepath.Join(d2, segment.RecoveryPointCheckpointFile))
	if err != nil || cp[tp("cp", 0)] != 40 {
		t.Fatalf("destination's recovery points %v (%v), want cp-0 at 40", cp, err)
	}
	m.Close()
}

// Kafka: alterReplicaLogDirs to another directory while a move runs
// removes the first future replica and starts a new one
// (futureReplicaDirChanged); deleting the partition stops the move and
// removes its future as well.
func TestMoveCancelledByAnotherDirAndByDelete(t *testing.T) {
	d1, d2, d3 := t.TempDir(), t.TempDir(), t.TempDir()
	m := openManager(t, []string{d1, d2, d3}, smallSegments)
	defer m.Close()
	pl, err := m.Create(tp("x", 0), logdir.TopicID{3})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, pl.Log, 20)
	held, release := make(chan struct{}, 2), make(chan struct{})
	m.SetMoveHook(func(_ segment.TopicPartition, s logdir.MoveStep) bool {
		if s == logdir.StepFutureCreated {
			held <- struct{}{}
			<-release
		}
		return true
	})
	if err := m.AlterLogDir(tp("x", 0), d2); err != nil {
		t.Fatal(err)
	}
	<-held
	redirected := make(chan error, 1)
	go func() { redirected <- m.AlterLogDir(tp("x", 0), d3) }()
	time.Sleep(200 * time.Millisecond) // the caller is waiting for the move to end
	release <- struct{}{}              // the first move sees its cancellation
	if err := <-redirected; err != nil {
		t.Fatal(err)
	}
	if left := dirNames(t, d2, "x-0"); len(left) > 0 {
		t.Fatalf("the cancelled move left %v", left)
	}
	<-held // the second move, to d3
	deleted := make(chan error, 1)
	go func() { deleted <- m.Delete(tp("x", 0)) }()
	time.Sleep(200 * time.Millisecond) // the caller is waiting for the move to end
	close(release)
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	eventually(t, "every dir of x-0 removed", func() bool {
		return len(dirNames(t, d1, "x-0"))+len(dirNames(t, d2, "x-0"))+len(dirNames(t, d3, "x-0")) == 0
	})
	if _, ok := m.Get(tp("x", 0)); ok || len(m.Futures()) != 0 {
		t.Fatalf("after the delete: futures %v", m.Futures())
	}
}
