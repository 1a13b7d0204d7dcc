package logdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/varve/varve/segment"
)

// LeaderEpochCheckpointFile is Kafka's per-partition leader epoch cache
// file; the layer above writes it, a move carries it along.
const LeaderEpochCheckpointFile = "leader-epoch-checkpoint"

// movedDir is a partition directory a move left: <tp>.<id>-future or
// <tp>.<id>-delete.
type movedDir struct {
	d    *logDir
	name string
	tp   segment.TopicPartition
	id   string
}

// parseMovedDir parses <topic>-<partition>.<id><suffix>.
func parseMovedDir(name, suffix string) (segment.TopicPartition, string, bool) {
	base, ok := strings.CutSuffix(name, suffix)
	if !ok {
		return segment.TopicPartition{}, "", false
	}
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || i == len(base)-1 {
		return segment.TopicPartition{}, "", false
	}
	tp := segment.ParseTopicPartition(base[:i])
	if tp.String() != base[:i] {
		return segment.TopicPartition{}, "", false
	}
	return tp, base[i+1:], true
}

// dirListing is what settleMoves found in every log dir.
type dirListing struct {
	current map[segment.TopicPartition][]*logDir
	futures []movedDir
	deletes map[string]bool // "<tp>.<id>" of the -delete dirs
}

// settleMoves runs before the partitions are loaded and decides, from
// names alone, what a move cut by a crash left (see doc.go):
//
//   - a partition in two log dirs is an error, as in Kafka (an operator
//     removes one); a move never leaves that;
//   - <tp>.<id>-future while <tp> exists in another dir: the swap had
//     not begun; the move resumes from the future's end once the layer
//     above calls ResumeMoves, as Kafka resumes it (a second future of
//     the partition, or one beside <tp> in its own dir, is removed);
//   - <tp>.<id>-future with no <tp> but <tp>.<id>-delete: the swap was
//     cut between its two renames, and the future is complete (it is
//     closed before the first rename): it is renamed <tp>;
//   - <tp>.<id>-future alone: the partition was deleted while moving;
//     it is removed.
//
// The -delete dirs are removed afterwards, as every start does.
func (m *Manager) settleMoves() error {
	ls, err := m.listDirs()
	if err != nil {
		return err
	}
	for tp, ds := range ls.current {
		if len(ds) > 1 {
			return fmt.Errorf("log dirs: partition %s is in both %s and %s: remove one of them (the one on the log dir that failed most recently)",
				tp, ds[0].path, ds[1].path)
		}
	}
	for _, f := range ls.futures {
		path := filepath.Join(f.d.path, f.name)
		switch {
		case len(ls.current[f.tp]) > 0 && ls.current[f.tp][0] != f.d && !ls.futureTwice(f):
			m.mu.resume = append(m.mu.resume, f) // before any goroutine: no lock needed
		case len(ls.current[f.tp]) > 0:
			m.cfg.Logger.Info("removing the future log of a move that cannot go on", "dir", path)
			err = os.RemoveAll(path)
		case ls.deletes[f.tp.String()+"."+f.id]:
			m.cfg.Logger.Info("completing the swap of a moved partition", "dir", path)
			err = m.promoteFuture(f)
		default:
			m.cfg.Logger.Warn("removing the future log of a partition that has no current log", "dir", path)
			err = os.RemoveAll(path)
		}
		if err != nil {
			return fmt.Errorf("settle %s: %w", path, err)
		}
	}
	return nil
}

// futureTwice says whether the partition of f has another future dir
// listed before f (only the first is resumed).
func (ls *dirListing) futureTwice(f movedDir) bool {
	for _, o := range ls.futures {
		if o.tp == f.tp {
			return o != f
		}
	}
	return false
}

// promoteFuture renames a complete future <tp>, durably.
func (m *Manager) promoteFuture(f movedDir) error {
	if err := f.d.fs.Rename(filepath.Join(f.d.path, f.name), filepath.Join(f.d.path, f.tp.String())); err != nil {
		return err
	}
	return f.d.fs.SyncDir(f.d.path)
}

// listDirs lists the partition, future and delete dirs of every log dir.
func (m *Manager) listDirs() (dirListing, error) {
	ls := dirListing{current: map[segment.TopicPartition][]*logDir{}, deletes: map[string]bool{}}
	for _, d := range m.dirs {
		if err := d.fs.MkdirAll(d.path, 0o755); err != nil {
			return ls, fmt.Errorf("log dir %s: %w", d.path, err)
		}
		entries, err := d.fs.ReadDir(d.path)
		if err != nil {
			return ls, fmt.Errorf("list log dir %s: %w", d.path, err)
		}
		for _, e := range entries {
			if e.IsDir() {
				ls.add(d, e.Name())
			}
		}
	}
	return ls, nil
}

func (ls *dirListing) add(d *logDir, name string) {
	if tp, id, ok := parseMovedDir(name, FutureDirSuffix); ok {
		ls.futures = append(ls.futures, movedDir{d: d, name: name, tp: tp, id: id})
		return
	}
	if tp, id, ok := parseMovedDir(name, DeleteDirSuffix); ok {
		ls.deletes[tp.String()+"."+id] = true
		return
	}
	if tp := segment.ParseTopicPartition(name); tp.String() == name && tp.Topic != MetadataTopic {
		ls.current[tp] = append(ls.current[tp], d)
	}
}
