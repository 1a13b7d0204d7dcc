package segment

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Checkpoint file names, as Kafka names them (KAFKA-REFERENCE §1.1).
const (
	RecoveryPointCheckpointFile  = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpointFile = "log-start-offset-checkpoint"
	ReplicationCheckpointFile    = "replication-offset-checkpoint"
	CleanerOffsetCheckpointFile  = "cleaner-offset-checkpoint"
	CleanShutdownFile            = ".kafka_cleanshutdown"
)

// checkpointVersion is the only version Kafka's OffsetCheckpointFile
// writes and reads.
const checkpointVersion = 0

// ErrCorruptCheckpoint: a checkpoint file does not parse.
var ErrCorruptCheckpoint = errors.New("corrupt checkpoint file")

// TopicPartition names a partition in checkpoint files.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// ParseTopicPartition splits a partition directory name "<topic>-<n>".
// A name without a numeric suffix is taken as topic name with partition 0.
func ParseTopicPartition(dirName string) TopicPartition {
	i := strings.LastIndexByte(dirName, '-')
	if i > 0 {
		if p, err := strconv.ParseInt(dirName[i+1:], 10, 32); err == nil && p >= 0 {
			return TopicPartition{Topic: dirName[:i], Partition: int32(p)}
		}
	}
	return TopicPartition{Topic: dirName}
}

// EncodeCheckpoint renders Kafka's offset checkpoint text format:
//
//	0              version
//	<n>            number of entries
//	<topic> <partition> <offset>   one line per entry
//
// Entries are sorted so equal maps give equal files.
func EncodeCheckpoint(entries map[TopicPartition]int64) []byte {
	keys := make([]TopicPartition, 0, len(entries))
	for tp := range entries {
		keys = append(keys, tp)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Topic != keys[j].Topic {
			return keys[i].Topic < keys[j].Topic
		}
		return keys[i].Partition < keys[j].Partition
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion, len(keys))
	for _, tp := range keys {
		fmt.Fprintf(&b, "%s %d %d\n", tp.Topic, tp.Partition, entries[tp])
	}
	return b.Bytes()
}

// DecodeCheckpoint parses Kafka's offset checkpoint text format. An empty
// file holds no entries: Kafka 4 leaves cleaner-offset-checkpoint empty
// until a log is cleaned, and its own reader takes it as none.
func DecodeCheckpoint(data []byte) (map[TopicPartition]int64, error) {
	if len(data) == 0 {
		return map[TopicPartition]int64{}, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	v, ok := line()
	if !ok || strings.TrimSpace(v) != strconv.Itoa(checkpointVersion) {
		return nil, fmt.Errorf("%w: version line %q", ErrCorruptCheckpoint, v)
	}
	c, ok := line()
	n, err := strconv.Atoi(strings.TrimSpace(c))
	if !ok || err != nil || n < 0 {
		return nil, fmt.Errorf("%w: count line %q", ErrCorruptCheckpoint, c)
	}
	out := make(map[TopicPartition]int64, min(n, 1<<16))
	for i := 0; i < n; i++ {
		l, ok := line()
		if !ok {
			return nil, fmt.Errorf("%w: %d entries, expected %d", ErrCorruptCheckpoint, i, n)
		}
		tp, off, err := parseCheckpointEntry(l)
		if err != nil {
			return nil, err
		}
		out[tp] = off
	}
	if l, ok := line(); ok && strings.TrimSpace(l) != "" {
		return nil, fmt.Errorf("%w: more entries than the count %d", ErrCorruptCheckpoint, n)
	}
	return out, nil
}

func parseCheckpointEntry(l string) (TopicPartition, int64, error) {
	f := strings.Fields(l)
	if len(f) != 3 {
		return TopicPartition{}, 0, fmt.Errorf("%w: entry %q", ErrCorruptCheckpoint, l)
	}
	p, err1 := strconv.ParseInt(f[1], 10, 32)
	off, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return TopicPartition{}, 0, fmt.Errorf("%w: entry %q", ErrCorruptCheckpoint, l)
	}
	return TopicPartition{Topic: f[0], Partition: int32(p)}, off, nil
}

// ReadCheckpoint reads a checkpoint file. A missing file is an empty map.
func ReadCheckpoint(fsys FS, path string) (map[TopicPartition]int64, error) {
	if fsys == nil {
		fsys = OSFS{}
	}
	data, err := ReadFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, ioErr("read checkpoint", path, err)
	}
	m, err := DecodeCheckpoint(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// WriteCheckpoint replaces a checkpoint file atomically and durably:
// write path.tmp, fsync it, rename it over path, fsync the directory.
func WriteCheckpoint(fsys FS, path string, entries map[TopicPartition]int64) error {
	return WriteFileAtomic(fsys, path, EncodeCheckpoint(entries))
}

// WriteFileAtomic writes data to path through the temp-fsync-rename-fsync
// sequence, so that after a crash path holds either the old or the new
// content, never a mix. Every durable file Varve writes goes through it
// (checkpoints, producer snapshots, the clean-shutdown marker,
// partition.metadata, the metadata file, raft's quorum state), so that a
// fault-injecting fsys can cut each step. A nil fsys is the operating
// system's.
func WriteFileAtomic(fsys FS, path string, data []byte) error {
	if fsys == nil {
		fsys = OSFS{}
	}
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return ioErr("create", tmp, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return ioErr("write", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return ioErr("fsync", tmp, err)
	}
	if err := f.Close(); err != nil {
		return ioErr("close", tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return ioErr("rename", tmp, err)
	}
	return ioErr("fsync dir", filepath.Dir(path), fsys.SyncDir(filepath.Dir(path)))
}

// WriteCleanShutdown writes the clean-shutdown marker into dir (a log's
// directory, or a log dir under a log manager) for no known broker
// epoch, -1, as Kafka's LogManager.shutdown does by default.
func WriteCleanShutdown(fsys FS, dir string) error {
	return WriteCleanShutdownEpoch(fsys, dir, -1)
}

// WriteCleanShutdownEpoch writes the clean-shutdown marker into dir with
// the broker epoch the node held when it shut down.
func WriteCleanShutdownEpoch(fsys FS, dir string, brokerEpoch int64) error {
	return WriteFileAtomic(fsys, filepath.Join(dir, CleanShutdownFile), EncodeCleanShutdown(brokerEpoch))
}

// cleanShutdownVersion is the only version of the marker's content.
const cleanShutdownVersion = 0

// cleanShutdown is .kafka_cleanshutdown's content since Kafka 3.5
// (CleanShutdownFileHandler.Content), a JSON object:
//
//	{"version":0,"brokerEpoch":<the broker epoch at shutdown, or -1>}
type cleanShutdown struct {
	Version     *int   `json:"version"`
	BrokerEpoch *int64 `json:"brokerEpoch"`
}

// EncodeCleanShutdown is the marker's content for a broker epoch.
func EncodeCleanShutdown(brokerEpoch int64) []byte {
	return fmt.Appendf(nil, `{"version":%d,"brokerEpoch":%d}`, cleanShutdownVersion, brokerEpoch)
}

// ParseCleanShutdown returns the broker epoch a clean-shutdown marker
// holds. An empty marker (Kafka before 3.5), another version, or
// anything but the JSON object is an error: Kafka's
// CleanShutdownFileHandler.read then knows no epoch, though the
// shutdown still counts as clean.
func ParseCleanShutdown(data []byte) (int64, error) {
	var c cleanShutdown
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return -1, fmt.Errorf("%s: %w", CleanShutdownFile, err)
	}
	if c.Version == nil || *c.Version != cleanShutdownVersion || c.BrokerEpoch == nil || dec.More() {
		return -1, fmt.Errorf("%s: not version %d with a broker epoch: %q", CleanShutdownFile, cleanShutdownVersion, data)
	}
	return *c.BrokerEpoch, nil
}

// ReadFile reads a small file whole through fsys (the OS's when nil): the
// reading side of WriteFileAtomic, for checkpoints, markers and metadata.
func ReadFile(fsys FS, path string) ([]byte, error) {
	if fsys == nil {
		fsys = OSFS{}
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil && n > 0 {
		return nil, err
	}
	return buf, nil
}
