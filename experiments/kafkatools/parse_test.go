package main

import (
	"slices"
	"testing"
)

// Kafka: TopicCommand.describe prints a header line, then one tab-separated
// line per partition (Leader: none when there is no leader).
func TestParseDescribe(t *testing.T) {
	out := "Topic: t1\tTopicId: TB1UGwqfSQCdocvE-8hM2A\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: min.insync.replicas=2\n" +
		"\tTopic: t1\tPartition: 0\tLeader: 3\tReplicas: 3,2,1\tIsr: 1,2,3\tElr: N/A\tLastKnownElr: N/A\n" +
		"\tTopic: t1\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: 2\tElr: N/A\tLastKnownElr: N/A\n"
	d, err := parseDescribe(out)
	if err != nil {
		t.Fatal(err)
	}
	if d.PartitionCount != 2 || d.Configs != "min.insync.replicas=2" {
		t.Errorf("header: %+v", d)
	}
	p0, p1 := d.Partitions[0], d.Partitions[1]
	if p0.Leader != 3 || !slices.Equal(p0.Replicas, []int32{3, 2, 1}) || !sameSet(p0.ISR, p0.Replicas) {
		t.Errorf("partition 0: %+v", p0)
	}
	if p1.Leader != -1 || !slices.Equal(p1.ISR, []int32{2}) {
		t.Errorf("partition 1: %+v", p1)
	}
	if _, ok := healthy(d, 2); ok {
		t.Error("a partition without a leader and with a shrunk ISR passed as healthy")
	}
	if _, err := parseDescribe("Error while executing topic command"); err == nil {
		t.Error("output without a header parsed")
	}
}

// Kafka: MetadataQuorumCommand prints the status as "Name: value" lines
// and the replication as a table under a NodeId header.
func TestParseQuorum(t *testing.T) {
	status := "ClusterId:              eMoKtAZjS4emQ24Ma8gtJQ\nLeaderId:               2\nLeaderEpoch:            1\n" +
		`CurrentVoters:          [{"id": 1, "endpoints": ["CONTROLLER://127.0.0.1:29093"]}, {"id": 2, "endpoints": ["CONTROLLER://127.0.0.2:29093"]}, {"id": 3, "endpoints": ["CONTROLLER://127.0.0.3:29093"]}]` +
		"\nCurrentObservers:       []\n"
	q, err := parseQuorumStatus(status)
	if err != nil {
		t.Fatal(err)
	}
	if q.ClusterID != "eMoKtAZjS4emQ24Ma8gtJQ" || q.LeaderID != 2 || !slices.Equal(q.Voters, []int{1, 2, 3}) || q.Observers != 0 {
		t.Errorf("status: %+v", q)
	}
	repl := "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t\n" +
		"2     \tAAAAAAAAAAAAAAAAAAAAAA\t8           \t0  \t1796150375044     \t1796150375044        \tLeader  \t\n" +
		"1     \tAAAAAAAAAAAAAAAAAAAAAA\t7           \t1  \t1796150375044     \t1796150375044        \tFollower\t\n"
	rows, err := parseReplication(repl)
	if err != nil {
		t.Fatal(err)
	}
	want := []replicationRow{{2, 8, 0, "Leader"}, {1, 7, 1, "Follower"}}
	if !slices.Equal(rows, want) {
		t.Errorf("replication rows %+v, want %+v", rows, want)
	}
	if seen, ok := replicationCheck(repl, 0); ok {
		t.Errorf("two rows passed as a three-voter quorum: %s", seen)
	}
}

// Kafka: ConsumerGroupCommand --describe prints a header and one row per
// partition, with "-" for what it does not know.
func TestParseGroupDescribe(t *testing.T) {
	out := "\nConsumer group 'g1' has no active members.\n\n" +
		"GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n" +
		"g1              cp              0          100             100             0               -               -               -\n"
	rows := parseGroupDescribe(out)
	if len(rows) != 1 || rows[0] != (groupRow{Topic: "cp", Partition: 0, Current: "100", End: "100", Lag: "0"}) {
		t.Errorf("rows %+v", rows)
	}
}

func TestCompareLines(t *testing.T) {
	sent := []string{"a", "b", "c", "d"}
	if r := compareLines(sent, []string{"a", "b", "c", "d"}); !r.exactlyOnce() {
		t.Errorf("identical lines: %s", r)
	}
	r := compareLines(sent, []string{"a", "c", "b", "c", "x"})
	if r.exactlyOnce() || !slices.Equal(r.Missing, []string{"d"}) || !slices.Equal(r.Duplicated, []string{"c"}) ||
		!slices.Equal(r.Unexpected, []string{"x"}) || r.OutOfOrder != 1 {
		t.Errorf("report %+v", r)
	}
	got := consumedLines("WARN something\nline-000001\nline-000002\r\nProcessed a total of 2 messages\n", "line-")
	if !slices.Equal(got, []string{"line-000001", "line-000002"}) {
		t.Errorf("consumed %q", got)
	}
}

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"java", "-cp", "/libs/*", "--add-config", "a=1,b=2", "it's"})
	want := `java -cp '/libs/*' --add-config a=1,b=2 'it'\''s'`
	if got != want {
		t.Errorf("shellJoin: %s, want %s", got, want)
	}
}
