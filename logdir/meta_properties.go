package logdir

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/internal/kuuid"
	"github.com/varve/varve/segment"
)

// MetaPropertiesFile is the file at the root of every log dir that
// Kafka's `kafka-storage format` writes: the cluster, node and
// directory ids.
const MetaPropertiesFile = "meta.properties"

// ErrMetaMismatch is a log dir formatted for another cluster or node.
var ErrMetaMismatch = errors.New("log dir belongs to another cluster or node")

// MetaProperties is meta.properties, version 1 (KRaft). Kafka:
// MetaProperties.
type MetaProperties struct {
	ClusterID   string
	NodeID      int32
	DirectoryID TopicID // a Uuid, rendered as Kafka renders one
}

// encode renders mp as Kafka writes it, a Java properties file
// (Properties.store with an empty comment): the comment, the date, then
// the keys in the order Java's Properties iterates these four, which
// Kafka 4.4.0's own files show.
//
//	#
//	#Tue Dec 01 12:00:00 UTC 2026
//	node.id=<id>
//	directory.id=<uuid>
//	version=1
//	cluster.id=<id>
func (mp MetaProperties) encode(now time.Time) []byte {
	return fmt.Appendf(nil, "#\n#%s\nnode.id=%d\ndirectory.id=%s\nversion=1\ncluster.id=%s\n",
		now.Format("Mon Jan 02 15:04:05 MST 2006"), mp.NodeID, mp.DirectoryID, mp.ClusterID)
}

// ParseMetaProperties reads meta.properties: "key=value" (or "key:
// value") lines, comments starting with # or !. Version 1 needs node.id
// and cluster.id; version 0 (ZooKeeper brokers) is refused.
func ParseMetaProperties(data []byte) (MetaProperties, error) {
	props := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v := line, ""
		if i := strings.IndexAny(line, "=:"); i >= 0 {
			k, v = line[:i], line[i+1:]
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	var mp MetaProperties
	if props["version"] != "1" {
		return mp, fmt.Errorf("%s: version %q, want 1", MetaPropertiesFile, props["version"])
	}
	id, err := strconv.ParseInt(props["node.id"], 10, 32)
	if err != nil || id < 0 {
		return mp, fmt.Errorf("%s: node.id %q", MetaPropertiesFile, props["node.id"])
	}
	mp.NodeID, mp.ClusterID = int32(id), props["cluster.id"]
	if mp.ClusterID == "" {
		return mp, fmt.Errorf("%s: no cluster.id", MetaPropertiesFile)
	}
	if s, ok := props["directory.id"]; ok {
		if mp.DirectoryID, err = ParseTopicID(s); err != nil {
			return mp, fmt.Errorf("%s: directory.id: %w", MetaPropertiesFile, err)
		}
	}
	return mp, nil
}

// FormatOrCheck makes dir a log dir of node nodeID in cluster
// clusterID: it writes meta.properties (with a random directory id)
// when there is none, and otherwise checks that the one there names
// the same cluster and node, as Kafka refuses to start on a log dir of
// another cluster or node (ErrMetaMismatch). fsys nil is the operating
// system's.
func FormatOrCheck(fsys segment.FS, dir string, nodeID int32, clusterID string) (MetaProperties, error) {
	path := filepath.Join(dir, MetaPropertiesFile)
	data, err := segment.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		mp := MetaProperties{ClusterID: clusterID, NodeID: nodeID, DirectoryID: newDirectoryID()}
		if err := segment.WriteFileAtomic(fsys, path, mp.encode(time.Now().UTC())); err != nil {
			return mp, fmt.Errorf("format %s: %w", dir, err)
		}
		return mp, nil
	}
	if err != nil {
		return MetaProperties{}, fmt.Errorf("read %s: %w", path, err)
	}
	mp, err := ParseMetaProperties(data)
	if err != nil {
		return mp, fmt.Errorf("%s: %w", dir, err)
	}
	if mp.ClusterID != clusterID || mp.NodeID != nodeID {
		return mp, fmt.Errorf("%s: %w: it has cluster.id %s and node.id %d, this node %s and %d",
			dir, ErrMetaMismatch, mp.ClusterID, mp.NodeID, clusterID, nodeID)
	}
	return mp, nil
}

// newDirectoryID is a random Uuid that is none of Kafka's reserved
// directory ids (those have their top 64 bits zero, which a version 4
// Uuid never has).
func newDirectoryID() TopicID { return kuuid.Random() }
