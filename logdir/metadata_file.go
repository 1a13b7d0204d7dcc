package logdir

import (
	"encoding/base64"
	"fmt"
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
// write-temp, fsync, rename, fsync-directory sequence. The bytes are
// those of Kafka's PartitionMetadata.encode, with no newline after the
// id:
//
//	version: 0
//	topic_id: <id>
func writePartitionMetadata(fsys segment.FS, dir string, id TopicID) error {
	return segment.WriteFileAtomic(fsys, filepath.Join(dir, PartitionMetadataFile), encodePartitionMetadata(id))
}

// encodePartitionMetadata is partition.metadata's content for id.
func encodePartitionMetadata(id TopicID) []byte {
	return []byte(partitionMetadataVersion + "0\n" + partitionMetadataTopicID + id.String())
}

// The two lines of partition.metadata start with these (Kafka's
// PartitionMetadataFile).
const (
	partitionMetadataVersion = "version: "
	partitionMetadataTopicID = "topic_id: "
)

// readPartitionMetadata returns the topic id in a partition directory's
// partition.metadata.
func readPartitionMetadata(fsys segment.FS, dir string) (TopicID, error) {
	path := filepath.Join(dir, PartitionMetadataFile)
	data, err := segment.ReadFile(fsys, path)
	if err != nil {
		return TopicID{}, err
	}
	id, err := ParsePartitionMetadata(data)
	if err != nil {
		return TopicID{}, fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}

// ParsePartitionMetadata reads partition.metadata as Kafka's
// PartitionMetadataReadBuffer does: a "version: 0" line, then a
// "topic_id: <id>" line. A newline after the id (as Varve wrote before
// it wrote Kafka's bytes) and CRLF line ends are accepted; another
// version is refused.
func ParsePartitionMetadata(data []byte) (TopicID, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\r\n"), "\n")
	if len(lines) != 2 {
		return TopicID{}, fmt.Errorf("partition metadata: %d lines, want 2", len(lines))
	}
	version, ok := strings.CutPrefix(strings.TrimRight(lines[0], "\r"), partitionMetadataVersion)
	if !ok || strings.TrimSpace(version) != "0" {
		return TopicID{}, fmt.Errorf("partition metadata: unrecognized version line %q", lines[0])
	}
	id, ok := strings.CutPrefix(strings.TrimRight(lines[1], "\r"), partitionMetadataTopicID)
	if !ok {
		return TopicID{}, fmt.Errorf("partition metadata: no topic_id line: %q", lines[1])
	}
	return ParseTopicID(strings.TrimSpace(id))
}
