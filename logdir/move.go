package logdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/varve/varve/segment"
)

// Suffixes of the directories a move leaves in a log dir, Kafka's names:
// <topic>-<partition>.<uniqueId>-future and ...-delete.
const (
	FutureDirSuffix = "-future"
	DeleteDirSuffix = "-delete"
)

var (
	// ErrLogDirNotFound: the directory is not one of log.dirs (Kafka's
	// LOG_DIR_NOT_FOUND).
	ErrLogDirNotFound = errors.New("log dir not found in log.dirs")
	// errMoveStopped: the move was cancelled (another destination, a
	// deletion, Close) before its swap began.
	errMoveStopped = errors.New("log dir move stopped")
)

// moveChunk is how many bytes the copy reads from the current log at a
// time; a pass that reads less than half of it is close enough to the
// end for the swap.
const moveChunk = 1 << 20

// move is a partition's copy into another log dir: Kafka's future
// replica and the ReplicaAlterLogDirsThread that feeds it.
type move struct {
	tp       segment.TopicPartition
	id       string // the uniqueId of the -future and -delete names
	src, dst *logDir
	topicID  TopicID
	future   atomic.Pointer[segment.Log] // nil until created
	swapping atomic.Bool                 // the swap began: it is no longer cancelled
	cancel   chan struct{}
	done     chan struct{}
	hook     func(segment.TopicPartition, MoveStep) bool // Manager.moveHook when the move began
	resume   bool                                        // its future dir is on disk from before a restart
}

func (mv *move) futureName() string { return mv.tp.String() + "." + mv.id + FutureDirSuffix }
func (mv *move) deleteName() string { return mv.tp.String() + "." + mv.id + DeleteDirSuffix }
func (mv *move) futurePath() string { return filepath.Join(mv.dst.path, mv.futureName()) }

// FutureLog is a partition's copy under way in another log dir (Kafka's
// future replica), as DescribeLogDirs reports it.
type FutureLog struct {
	TP        segment.TopicPartition
	LogDir    string // the destination log dir, as configured
	Size      int64  // bytes of its segments
	EndOffset int64  // its log end offset
}

// AlterLogDir moves tp's log into log dir dir (Kafka's
// alterReplicaLogDirs). dir must be one of log.dirs, compared as
// absolute paths (ErrLogDirNotFound), and online (ErrOffline). A
// partition already in dir, or already moving there, is left as it is;
// a move to another dir is cancelled first. A partition this node holds
// no log of gets ErrUnknownPartition, and dir is remembered as the dir
// to create it in (Kafka's preferred log dir). The move runs in the
// background: see doc.go for its steps.
func (m *Manager) AlterLogDir(tp segment.TopicPartition, dir string) error {
	dst := m.dirByAbsPath(dir)
	if dst == nil {
		return fmt.Errorf("%s: %w", dir, ErrLogDirNotFound)
	}
	if dst.isOffline() {
		return fmt.Errorf("alter log dir of %s: %w", tp, dst.offlineErr())
	}
	for {
		mv, stale, err := m.beginMove(tp, dst, "")
		if stale != nil {
			m.stopMove(stale)
			continue // then decide again
		}
		if err != nil || mv == nil {
			return err
		}
		go m.runMove(mv)
		return nil
	}
}

// dirByAbsPath finds the log dir whose absolute path is path.
func (m *Manager) dirByAbsPath(path string) *logDir {
	for _, d := range m.dirs {
		if abs, err := filepath.Abs(d.path); err == nil && abs == path {
			return d
		}
	}
	return nil
}

// beginMove registers a move of tp to dst. It returns the move to run
// (nil: nothing to do), or a move to another dir that must be stopped
// first. A resumed move names the id of its future dir on disk, a new
// one "".
func (m *Manager) beginMove(tp segment.TopicPartition, dst *logDir, resumeID string) (mv, stale *move, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closing {
		return nil, nil, fmt.Errorf("alter log dir of %s: %w: closing", tp, ErrOffline)
	}
	if cur, ok := m.mu.moves[tp]; ok {
		if cur.dst == dst {
			return nil, nil, nil
		}
		return nil, cur, nil
	}
	e, ok := (*m.logs.Load())[tp]
	if !ok {
		for _, d := range m.dirs {
			if _, off := d.offlineParts[tp]; off {
				return nil, nil, fmt.Errorf("%s: %w", tp, d.offlineErr())
			}
		}
		m.mu.preferred[tp] = dst
		return nil, nil, fmt.Errorf("%s: %w", tp, ErrUnknownPartition)
	}
	if e.dir == dst {
		return nil, nil, nil
	}
	for _, d := range m.dirs {
		if d.isOffline() { // Kafka makes no future log while a dir is offline
			return nil, nil, fmt.Errorf("alter log dir of %s: %w", tp, d.offlineErr())
		}
	}
	id := resumeID
	if id == "" {
		var b [16]byte
		rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	mv = &move{tp: tp, id: id, resume: resumeID != "", src: e.dir, dst: dst, topicID: e.TopicID,
		cancel: make(chan struct{}), done: make(chan struct{}), hook: m.mu.moveHook}
	m.mu.moves[tp] = mv
	m.done.Add(1) // under mu: Close, once closing is set, waits for it
	return mv, nil, nil
}

// stopMove cancels mv and waits for it to end. A move whose swap began
// finishes it first.
func (m *Manager) stopMove(mv *move) {
	m.mu.Lock()
	select {
	case <-mv.cancel:
	default:
		close(mv.cancel)
	}
	m.mu.Unlock()
	<-mv.done
}

// stopMoveOf stops the move of tp, if any.
func (m *Manager) stopMoveOf(tp segment.TopicPartition) {
	m.mu.Lock()
	mv, ok := m.mu.moves[tp]
	m.mu.Unlock()
	if ok {
		m.stopMove(mv)
	}
}

// stopMoves stops every move (Close).
func (m *Manager) stopMoves() {
	m.mu.Lock()
	mvs := make([]*move, 0, len(m.mu.moves))
	for _, mv := range m.mu.moves {
		mvs = append(mvs, mv)
	}
	m.mu.Unlock()
	for _, mv := range mvs {
		m.stopMove(mv)
	}
}

// Moving says whether tp is being moved to another log dir. Kafka
// pauses the cleaning of such a partition (abortAndPauseCleaning) until
// its swap, so that the cleaner checkpoint the swap carries matches the
// copied batches; the layer above leaves it out of the cleaner's logs.
func (m *Manager) Moving(tp segment.TopicPartition) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.mu.moves[tp]
	return ok
}

// Futures lists the moves under way, sorted by partition.
func (m *Manager) Futures() []FutureLog {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []FutureLog
	for _, mv := range m.mu.moves {
		f := FutureLog{TP: mv.tp, LogDir: mv.dst.path}
		if l := mv.future.Load(); l != nil {
			f.Size, f.EndOffset = l.Size(), l.EndOffset()
		}
		out = append(out, f)
	}
	sortFutures(out)
	return out
}

// runMove is a move's goroutine: copy, then swap. On failure or
// cancellation before the swap the future dir is removed and the
// current log goes on serving.
func (m *Manager) runMove(mv *move) {
	defer m.done.Done()
	err := m.copyPhase(mv)
	switch {
	case err == nil:
		err = m.swap(mv)
	case errors.Is(err, errHookStop):
		mv.future.Load().Close() // the files stay, as a crash leaves them
	default:
		m.discardFuture(mv)
	}
	m.mu.Lock()
	delete(m.mu.moves, mv.tp)
	m.mu.Unlock()
	close(mv.done)
	switch {
	case err == nil:
		m.cfg.Logger.Info("partition moved to another log dir", "partition", mv.tp, "from", mv.src.path, "to", mv.dst.path)
	case errors.Is(err, errMoveStopped), errors.Is(err, errHookStop):
	default:
		m.cfg.Logger.Error("moving a partition to another log dir failed", "partition", mv.tp,
			"from", mv.src.path, "to", mv.dst.path, "err", err)
	}
}

// stopped reports whether the move was cancelled or the manager is
// closing.
func (m *Manager) stopped(mv *move) bool {
	select {
	case <-mv.cancel:
		return true
	case <-m.stop:
		return true
	default:
		return false
	}
}

// copyPhase creates the future log and copies the current one into it
// while it keeps serving, until the future is close to its end.
func (m *Manager) copyPhase(mv *move) error {
	fut, err := m.openFuture(mv)
	if err != nil {
		return err
	}
	mv.future.Store(fut)
	if err := m.hook(mv, StepFutureCreated); err != nil {
		return err
	}
	for {
		if m.stopped(mv) {
			return errMoveStopped
		}
		if err := m.awaitMoveQuota(mv); err != nil {
			return err
		}
		e, ok := (*m.logs.Load())[mv.tp]
		if !ok || e.dir != mv.src {
			return fmt.Errorf("move %s: %w", mv.tp, ErrUnknownPartition)
		}
		chunk := m.moveQuota.chunk()
		read, err := catchUp(e.Log, fut, chunk)
		m.moveQuota.record(int64(read), m.cfg.Clock.Now())
		if err != nil {
			return fmt.Errorf("move %s: %w", mv.tp, err)
		}
		if read < chunk/2 {
			return m.hook(mv, StepCopied)
		}
	}
}

// openFuture reopens the future dir of a resumed move, or makes a new
// one (also when the old one does not open).
func (m *Manager) openFuture(mv *move) (*segment.Log, error) {
	if !mv.resume {
		return m.createFuture(mv)
	}
	l, err := m.reopenFuture(mv)
	if err == nil {
		return l, nil
	}
	m.cfg.Logger.Warn("the future log of a resumed move did not open; copying again", "dir", mv.futurePath(), "err", err)
	if err := os.RemoveAll(mv.futurePath()); err != nil {
		return nil, err
	}
	return m.createFuture(mv)
}

// reopenFuture opens a future left by a restart. Its partition.metadata
// is written again (a crash may have cut it) and the whole log is
// recovered: nothing of it was acknowledged, so a torn tail is only cut.
func (m *Manager) reopenFuture(mv *move) (*segment.Log, error) {
	if err := writePartitionMetadata(mv.dst.fs, mv.futurePath(), mv.topicID); err != nil {
		return nil, err
	}
	return m.openIn(mv.dst, mv.futurePath(), mv.tp.Topic, &segment.ManagedState{RecoveryPoint: 0, LogStartOffset: -1})
}

// ResumeMoves restarts the moves Open found under way (a -future dir
// beside the partition's current log in another dir), as Kafka's broker
// resumes its future replicas: each copy goes on from its future's end.
// The layer above calls it once it holds the loaded logs, since a move
// ends by handing it the moved log; until then the -future dirs stay as
// they are.
func (m *Manager) ResumeMoves() {
	m.mu.Lock()
	pending := m.mu.resume
	m.mu.resume = nil
	m.mu.Unlock()
	for _, f := range pending {
		mv, stale, err := m.beginMove(f.tp, f.d, f.id)
		if mv != nil {
			m.cfg.Logger.Info("resuming the move of a partition to another log dir", "partition", f.tp, "to", f.d.path)
			go m.runMove(mv)
			continue
		}
		// Another move was asked for meanwhile, or none is possible.
		m.cfg.Logger.Info("not resuming a move", "dir", filepath.Join(f.d.path, f.name), "stale", stale != nil, "err", err)
		if err := os.RemoveAll(filepath.Join(f.d.path, f.name)); err != nil {
			m.cfg.Logger.Warn("removing the future log of a move not resumed", "dir", f.name, "err", err)
		}
	}
}

// createFuture makes <topic>-<partition>.<id>-future in the destination
// with the partition's partition.metadata, and opens an empty log in it.
func (m *Manager) createFuture(mv *move) (*segment.Log, error) {
	d := mv.dst
	pdir := mv.futurePath()
	if err := d.fs.MkdirAll(pdir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", pdir, err)
	}
	if err := writePartitionMetadata(d.fs, pdir, mv.topicID); err != nil {
		return nil, fmt.Errorf("create %s: %w", pdir, err)
	}
	if err := d.fs.SyncDir(d.path); err != nil {
		return nil, fmt.Errorf("create %s: fsync %s: %w", pdir, d.path, err)
	}
	return m.openIn(d, pdir, mv.tp.Topic, &segment.ManagedState{CleanShutdown: true, RecoveryPoint: 0, LogStartOffset: 0})
}

// openIn opens the log in pdir, a directory of d, with topic's config.
func (m *Manager) openIn(d *logDir, pdir, topic string, managed *segment.ManagedState) (*segment.Log, error) {
	cfg := m.cfg.LogConfig(topic)
	cfg.Managed, cfg.FS = managed, d.fs
	if cfg.Logger == nil {
		cfg.Logger = m.cfg.Logger
	}
	l, err := segment.Open(pdir, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", pdir, err)
	}
	return l, nil
}

// discardFuture closes and removes a move's future dir (a move that
// failed or was stopped before its swap).
func (m *Manager) discardFuture(mv *move) {
	if l := mv.future.Load(); l != nil {
		l.Close()
	}
	if err := os.RemoveAll(mv.futurePath()); err != nil {
		m.cfg.Logger.Warn("removing an abandoned future log", "dir", mv.futurePath(), "err", err)
	}
}
