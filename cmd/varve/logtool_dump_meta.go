package main

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"strings"

	"github.com/varve/varve/logdir"
)

// Files Kafka keeps beside the segments, by name.
const (
	partitionMetadataFile = logdir.PartitionMetadataFile // per partition: the topic id
	quorumStateFile       = "quorum-state"               // __cluster_metadata-0: KRaft's election state
	metaPropertiesFile    = "meta.properties"            // each log dir's root: cluster, node and directory ids
)

// dumpPartitionMetadata prints partition.metadata's version and topic id,
// and says so when the bytes are not the ones Kafka writes (a newline
// after the id).
func (d *dumper) dumpPartitionMetadata(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	id, err := logdir.ParsePartitionMetadata(data)
	if err != nil {
		d.printf("%s: %v\n", path, err)
		return nil
	}
	d.printf("version: 0 topicId: %s\n", id)
	if want := "version: 0\ntopic_id: " + id.String(); string(data) != want {
		d.printf("%s: readable, but not the bytes Kafka writes (%q)\n", path, want)
	}
	return nil
}

// quorumState is Kafka's QuorumStateData (the quorum-state file's JSON):
// data_version 0 lists the voters, 1 (KIP-853) names the voted
// directory instead.
type quorumState struct {
	ClusterID        string `json:"clusterId"`
	LeaderID         int32  `json:"leaderId"`
	LeaderEpoch      int32  `json:"leaderEpoch"`
	VotedID          int32  `json:"votedId"`
	VotedDirectoryID string `json:"votedDirectoryId"`
	AppliedOffset    int64  `json:"appliedOffset"`
	CurrentVoters    []struct {
		VoterID int32 `json:"voterId"`
	} `json:"currentVoters"`
	DataVersion *int16 `json:"data_version"`
}

// dumpQuorumState prints KRaft's quorum-state file field by field.
func (d *dumper) dumpQuorumState(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var q quorumState
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&q); err != nil {
		d.printf("%s: not Kafka's quorum state JSON: %v\n", path, err)
		return nil
	}
	if q.DataVersion == nil || *q.DataVersion < 0 || *q.DataVersion > 1 {
		d.printf("%s: unknown data_version (want 0 or 1)\n", path)
		return nil
	}
	d.printf("data_version: %d clusterId: %q leaderId: %d leaderEpoch: %d votedId: %d", *q.DataVersion, q.ClusterID, q.LeaderID, q.LeaderEpoch, q.VotedID)
	if *q.DataVersion >= 1 {
		d.printf(" votedDirectoryId: %s", q.VotedDirectoryID)
	}
	d.printf(" appliedOffset: %d", q.AppliedOffset)
	if *q.DataVersion == 0 {
		voters := make([]int32, len(q.CurrentVoters))
		for i, v := range q.CurrentVoters {
			voters[i] = v.VoterID
		}
		d.printf(" currentVoters: %v", voters)
	}
	d.printf("\n")
	return nil
}

// dumpMetaProperties prints meta.properties (a Java properties file) key
// by key in name order, and names the keys Kafka's MetaProperties
// requires for the file's version that are missing: version 0 needs
// broker.id, version 1 node.id and cluster.id.
func (d *dumper) dumpMetaProperties(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	props := parseProperties(string(data))
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.printf("%s: %s\n", k, props[k])
	}
	var need []string
	switch props["version"] {
	case "0":
		need = []string{"broker.id"}
	case "1":
		need = []string{"node.id", "cluster.id"}
	default:
		d.printf("%s: unknown version %q (want 0 or 1)\n", path, props["version"])
		return nil
	}
	for _, k := range need {
		if _, ok := props[k]; !ok {
			d.printf("%s: version %s requires %s, which is missing\n", path, props["version"], k)
		}
	}
	return nil
}

// parseProperties reads the subset of the Java properties format that
// Kafka's meta.properties uses: "key=value" (or "key: value") lines,
// comments starting with # or !, blank lines, surrounding spaces.
func parseProperties(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			out[line] = ""
			continue
		}
		out[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return out
}

// metaFileKind classifies the named files above.
func metaFileKind(name string) (fileKind, bool) {
	switch name {
	case partitionMetadataFile:
		return kindPartitionMetadata, true
	case quorumStateFile:
		return kindQuorumState, true
	case metaPropertiesFile:
		return kindMetaProperties, true
	}
	return kindUnknown, false
}
