package replica

import (
	"bufio"
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

// writePartitionMetadata writes Kafka's partition.metadata:
//
//	version: 0
//	topic_id: <id>
func writePartitionMetadata(dir string, id TopicID) error {
	data := fmt.Sprintf("version: 0\ntopic_id: %s\n", id)
	return segment.WriteFileAtomic(nil, filepath.Join(dir, PartitionMetadataFile), []byte(data))
}

func readPartitionMetadata(dir string) (TopicID, error) {
	f, err := os.Open(filepath.Join(dir, PartitionMetadataFile))
	if err != nil {
		return TopicID{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "topic_id" {
			return ParseTopicID(strings.TrimSpace(v))
		}
	}
	return TopicID{}, fmt.Errorf("%s: no topic_id", dir)
}
