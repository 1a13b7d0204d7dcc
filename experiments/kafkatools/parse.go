package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// describedPartition is one partition line of kafka-topics --describe.
type describedPartition struct {
	Leader   int32 // -1: none
	Replicas []int32
	ISR      []int32
}

// describedTopic is kafka-topics --describe's answer for one topic.
type describedTopic struct {
	PartitionCount int
	Configs        string
	Partitions     map[int32]describedPartition
}

var (
	rePartitionCount = regexp.MustCompile(`PartitionCount:\s*(\d+)`)
	reTopicConfigs   = regexp.MustCompile(`\tConfigs:\s*(\S*)`)
	rePartitionLine  = regexp.MustCompile(`Partition:\s*(\d+)\s+Leader:\s*(-?\d+|none)\s+Replicas:\s*([\d,]*)\s+Isr:\s*([\d,]*)`)
)

// parseDescribe reads kafka-topics --describe output for one topic (its
// header line, then one line per partition).
func parseDescribe(out string) (describedTopic, error) {
	t := describedTopic{Partitions: map[int32]describedPartition{}}
	m := rePartitionCount.FindStringSubmatch(out)
	if m == nil {
		return t, fmt.Errorf("no PartitionCount in the output")
	}
	t.PartitionCount, _ = strconv.Atoi(m[1])
	if m := reTopicConfigs.FindStringSubmatch(out); m != nil {
		t.Configs = m[1]
	}
	for _, m := range rePartitionLine.FindAllStringSubmatch(out, -1) {
		p, _ := strconv.Atoi(m[1])
		leader := int32(-1)
		if l, err := strconv.Atoi(m[2]); err == nil {
			leader = int32(l)
		}
		t.Partitions[int32(p)] = describedPartition{Leader: leader, Replicas: parseIDs(m[3]), ISR: parseIDs(m[4])}
	}
	return t, nil
}

// parseIDs reads "1,2,3".
func parseIDs(s string) []int32 {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			out = append(out, int32(n))
		}
	}
	return out
}

// sameSet says whether a and b hold the same ids in any order.
func sameSet(a, b []int32) bool {
	return len(a) == len(b) && func() bool {
		x, y := slices.Clone(a), slices.Clone(b)
		slices.Sort(x)
		slices.Sort(y)
		return slices.Equal(x, y)
	}()
}

// quorumStatus is what kafka-metadata-quorum describe --status prints.
type quorumStatus struct {
	ClusterID string
	LeaderID  int
	Voters    []int
	Observers int
}

var (
	reQuorumCluster = regexp.MustCompile(`ClusterId:\s*(\S+)`)
	reQuorumLeader  = regexp.MustCompile(`LeaderId:\s*(-?\d+)`)
	reQuorumVoters  = regexp.MustCompile(`CurrentVoters:\s*(.*)`)
	reQuorumObs     = regexp.MustCompile(`CurrentObservers:\s*(.*)`)
	reVoterID       = regexp.MustCompile(`"id":\s*(\d+)`)
)

func parseQuorumStatus(out string) (quorumStatus, error) {
	var q quorumStatus
	m := reQuorumLeader.FindStringSubmatch(out)
	if m == nil {
		return q, fmt.Errorf("no LeaderId in the output")
	}
	q.LeaderID, _ = strconv.Atoi(m[1])
	if m := reQuorumCluster.FindStringSubmatch(out); m != nil {
		q.ClusterID = m[1]
	}
	if m := reQuorumVoters.FindStringSubmatch(out); m != nil {
		for _, v := range reVoterID.FindAllStringSubmatch(m[1], -1) {
			id, _ := strconv.Atoi(v[1])
			q.Voters = append(q.Voters, id)
		}
	}
	if m := reQuorumObs.FindStringSubmatch(out); m != nil {
		q.Observers = len(reVoterID.FindAllString(m[1], -1))
	}
	return q, nil
}

// replicationRow is one row of kafka-metadata-quorum describe
// --replication.
type replicationRow struct {
	NodeID       int
	LogEndOffset int64
	Lag          int64
	Status       string
}

// parseReplication reads the table under its header line (NodeId
// DirectoryId LogEndOffset Lag LastFetchTimestamp LastCaughtUpTimestamp
// Status).
func parseReplication(out string) ([]replicationRow, error) {
	var rows []replicationRow
	header := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "NodeId" {
			header = true
			continue
		}
		if !header || len(f) < 7 {
			continue
		}
		id, err1 := strconv.Atoi(f[0])
		leo, err2 := strconv.ParseInt(f[2], 10, 64)
		lag, err3 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		rows = append(rows, replicationRow{NodeID: id, LogEndOffset: leo, Lag: lag, Status: f[len(f)-1]})
	}
	if !header {
		return nil, fmt.Errorf("no NodeId header in the output")
	}
	return rows, nil
}

// groupRow is one partition row of kafka-consumer-groups --describe.
type groupRow struct {
	Topic             string
	Partition         int32
	Current, End, Lag string // "-" when unknown
}

// parseGroupDescribe reads the rows under the GROUP TOPIC PARTITION
// CURRENT-OFFSET LOG-END-OFFSET LAG header.
func parseGroupDescribe(out string) []groupRow {
	var rows []groupRow
	var cols map[string]int
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "GROUP" {
			cols = map[string]int{}
			for i, name := range f {
				cols[name] = i
			}
			continue
		}
		if cols == nil || len(f) < len(cols) {
			continue
		}
		p, err := strconv.Atoi(f[cols["PARTITION"]])
		if err != nil {
			continue
		}
		rows = append(rows, groupRow{Topic: f[cols["TOPIC"]], Partition: int32(p),
			Current: f[cols["CURRENT-OFFSET"]], End: f[cols["LOG-END-OFFSET"]], Lag: f[cols["LAG"]]})
	}
	return rows
}

// lineReport compares the lines a consumer printed with those produced.
type lineReport struct {
	Sent, Got  int
	Missing    []string // produced, never consumed
	Duplicated []string // consumed more than once
	Unexpected []string // consumed, never produced
	OutOfOrder int      // consumed lines that came before one produced earlier
}

// exactlyOnce says every produced line was consumed once, in order, and
// nothing else was.
func (r lineReport) exactlyOnce() bool {
	return len(r.Missing) == 0 && len(r.Duplicated) == 0 && len(r.Unexpected) == 0 && r.OutOfOrder == 0
}

func (r lineReport) String() string {
	return fmt.Sprintf("%d produced, %d consumed: %d missing %v, %d duplicated %v, %d unexpected %v, %d out of order",
		r.Sent, r.Got, len(r.Missing), head(r.Missing), len(r.Duplicated), head(r.Duplicated),
		len(r.Unexpected), head(r.Unexpected), r.OutOfOrder)
}

// head is the first few of a list, for messages.
func head(s []string) []string { return s[:min(len(s), 5)] }

// compareLines checks got against sent, whose lines are distinct.
func compareLines(sent, got []string) lineReport {
	r := lineReport{Sent: len(sent), Got: len(got)}
	pos := make(map[string]int, len(sent))
	for i, s := range sent {
		pos[s] = i
	}
	seen := map[string]int{}
	last := -1
	for _, g := range got {
		i, ok := pos[g]
		if !ok {
			r.Unexpected = append(r.Unexpected, g)
			continue
		}
		if seen[g]++; seen[g] == 2 {
			r.Duplicated = append(r.Duplicated, g)
		}
		if i < last {
			r.OutOfOrder++
		}
		last = max(last, i)
	}
	for _, s := range sent {
		if seen[s] == 0 {
			r.Missing = append(r.Missing, s)
		}
	}
	return r
}

// consumedLines are the record values a console consumer printed: every
// output line that looks like a produced one (prefix), in order.
func consumedLines(out, prefix string) []string {
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, prefix) {
			got = append(got, strings.TrimRight(line, "\r"))
		}
	}
	return got
}
