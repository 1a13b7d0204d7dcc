package logdir

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/varve/varve/segment"
)

// PartitionMetadataFile is the file Kafka writes in each partition
// directory with the topic id, before the first append.
const PartitionMetadataFile = "partition.metadata"

// TopicID is a topic's 16-byte UUID (Kafka's topic id).
type TopicID [16]byte

// String renders a topic id as Kafka does: URL-safe base64, no padding.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ParseTopicID parses Kafka's rendering of a topic id.
func ParseTopicID(s string) (TopicID, error) {
	var id TopicID
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("bad topic id %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// writePartitionMetadata writes Kafka's partition.metadata through the
// write-temp, fsync, rename, fsync-directory sequence:
//
//	version: 0
//	topic_id: <id>
func writePartitionMetadata(fsys segment.FS, dir string, id TopicID) error {
	data := fmt.Sprintf("version: 0\ntopic_id: %s\n", id)
	return WriteFileAtomic(fsys, filepath.Join(dir, PartitionMetadataFile), []byte(data))
}

// readPartitionMetadata returns the topic id in a partition directory's
// partition.metadata.
func readPartitionMetadata(fsys segment.FS, dir string) (TopicID, error) {
	path := filepath.Join(dir, PartitionMetadataFile)
	data, err := readFile(fsys, path)
	if err != nil {
		return TopicID{}, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "topic_id" {
			return ParseTopicID(strings.TrimSpace(v))
		}
	}
	return TopicID{}, fmt.Errorf("%s: no topic_id", path)
}

// readFile reads a small file whole through fsys.
func readFile(fsys segment.FS, path string) ([]byte, error) {
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
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf, nil
}

// WriteFileAtomic replaces path with data through fsys: write path.tmp,
// fsync it, rename it over path, fsync the directory. After a crash at
// any step path holds the old or the new content, never a mix. Every
// durable file the broker writes goes through it (checkpoints, the
// clean-shutdown marker, partition.metadata, the metadata file), so that
// a fault-injecting fsys can cut each step. A nil fsys is the operating
// system's.
func WriteFileAtomic(fsys segment.FS, path string, data []byte) error {
	return segment.WriteFileAtomic(fsys, path, data)
}
