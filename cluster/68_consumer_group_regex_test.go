package cluster_test

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicValues collects the "topic value" pairs a consumer read.
type topicValues struct {
	mu  sync.Mutex
	got []string
}

func (v *topicValues) add(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.got = append(v.got, s)
}

func (v *topicValues) snapshot() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.got)
}

// countPrefix counts the entries of got that start with prefix.
func countPrefix(got []string, prefix string) int {
	n := 0
	for _, s := range got {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// Kafka: KIP-848 regular expression subscriptions with franz-go's
// ConsumeRegex on the consumer protocol (it sends SubscribedTopicRegex).
// The broker resolves the regular expression: the member reads the
// matching topics and not the others; a matching topic created later
// is resolved at a later heartbeat, the group epoch bumps and the
// member reads it too. ConsumerGroupDescribe shows the regular
// expression.
func TestConsumerGroupRegexSubscription(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "rx-a", 2, nil)
	createTopic(t, b.addr, "other", 1, nil)
	produceSpread(t, b.addr, "rx-a", 2, 10)
	produceSpread(t, b.addr, "other", 1, 5)

	var seen topicValues
	cl := client(t, b.addr, kgo.ConsumerGroup("rxg"), kgo.ConsumeRegex(), kgo.ConsumeTopics("rx-.*"),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	pollCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for pollCtx.Err() == nil {
			cl.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) { seen.add(r.Topic + " " + string(r.Value)) })
		}
	}()
	t.Cleanup(func() { stop(); <-done })

	waitFor(t, 30*time.Second, "the ten records of rx-a", func() bool { return countPrefix(seen.snapshot(), "rx-a ") == 10 })
	createTopic(t, b.addr, "rx-b", 3, nil)
	produceSpread(t, b.addr, "rx-b", 3, 9)
	waitFor(t, 45*time.Second, "the nine records of rx-b, created after the member joined", func() bool {
		return countPrefix(seen.snapshot(), "rx-b ") == 9
	})
	got := seen.snapshot()
	if n := countPrefix(got, "other "); n != 0 || len(got) != 19 {
		t.Fatalf("read %d records (%d of other), want the 19 of rx-a and rx-b once: %v", len(got), n, got)
	}

	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{"rxg"}
	resp, err := req.RequestWith(ctx(t), client(t, b.addr))
	if err != nil {
		t.Fatal(err)
	}
	g := resp.Groups[0]
	if g.ErrorCode != 0 || len(g.Members) != 1 || g.Members[0].SubscribedTopicRegex == nil {
		t.Fatalf("ConsumerGroupDescribe: %+v", g)
	}
	var topics []string
	for _, tp := range g.Members[0].Assignment.TopicPartitions {
		topics = append(topics, tp.Topic)
	}
	slices.Sort(topics)
	if !slices.Equal(topics, []string{"rx-a", "rx-b"}) {
		t.Fatalf("member %q assigned topics %v, want rx-a and rx-b", *g.Members[0].SubscribedTopicRegex, topics)
	}
}

// Kafka: KIP-848 regular expression subscriptions with Kafka's own Java
// consumer: subscribe(SubscriptionPattern) with group.protocol=consumer
// sends the RE2/J pattern for the broker to resolve. The consumer reads
// the matching topic's records, then those of a matching topic created
// while it runs, never the other topic's.
func TestJavaConsumerRegexSubscription(t *testing.T) {
	libs := kafkaLibs(t)
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not installed")
	}
	classes := t.TempDir()
	if out, err := exec.Command("javac", "-cp", filepath.Join(libs, "*"), "-d", classes,
		filepath.Join("testdata", "java", "RegexConsumer.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "jrx-a", 2, nil)
	createTopic(t, b.addr, "other", 1, nil)
	produceSpread(t, b.addr, "jrx-a", 2, 6)
	produceSpread(t, b.addr, "other", 1, 3)

	cx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cx, "java", "-Xmx256m", "-cp", classes+string(filepath.ListSeparator)+filepath.Join(libs, "*"),
		"RegexConsumer", b.addr, "java-rx", "jrx-.*", strconv.Itoa(12))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen topicValues
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			seen.add(sc.Text())
		}
	}()
	t.Cleanup(func() {
		if t.Failed() { // the consumer is killed first: its stderr is complete
			cancel()
			<-read
			cmd.Wait()
			t.Logf("Java consumer's stderr:\n%s", stderr.String())
		}
	})
	waitFor(t, 60*time.Second, "the Java consumer to read jrx-a", func() bool { return countPrefix(seen.snapshot(), "jrx-a ") == 6 })
	createTopic(t, b.addr, "jrx-b", 2, nil)
	produceSpread(t, b.addr, "jrx-b", 2, 6)
	<-read
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Java consumer: %v, read %v\n%s", err, seen.snapshot(), stderr.String())
	}
	got := seen.snapshot()
	slices.Sort(got)
	want := []string{"jrx-a 0/0", "jrx-a 0/2", "jrx-a 0/4", "jrx-a 1/1", "jrx-a 1/3", "jrx-a 1/5",
		"jrx-b 0/0", "jrx-b 0/2", "jrx-b 0/4", "jrx-b 1/1", "jrx-b 1/3", "jrx-b 1/5"}
	if !slices.Equal(got, want) {
		t.Fatalf("Java consumer read %v, want %v", got, want)
	}
}

// Kafka: Metadata v12 looks topics up by id (KIP-516). Kafka's Java
// consumer does so for the topic ids of a regular expression
// subscription's assignment, sending each id with the name "" (the
// field's default), not null: the id decides, and "" is neither looked
// up nor auto-created.
func TestMetadataByTopicIDWithEmptyName(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "by-id", 2, nil)
	cl := client(t, b.addr)
	all := kmsg.NewPtrMetadataRequest()
	resp, err := all.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	var id [16]byte
	for _, tp := range resp.Topics {
		if tp.Topic != nil && *tp.Topic == "by-id" {
			id = tp.TopicID
		}
	}
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	rt := kmsg.NewMetadataRequestTopic()
	empty := ""
	rt.Topic, rt.TopicID = &empty, id
	req.Topics = append(req.Topics, rt)
	byID, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(byID.Topics) != 1 || byID.Topics[0].ErrorCode != 0 || byID.Topics[0].Topic == nil ||
		*byID.Topics[0].Topic != "by-id" || len(byID.Topics[0].Partitions) != 2 {
		t.Fatalf("Metadata by id: %+v", byID.Topics)
	}
}

// Kafka: KIP-848 regular expressions resolve only to the topics the
// member's principal may DESCRIBE (GroupMetadataManager filters the
// resolution with the authorizer). alice may read acl-a, not acl-b:
// her regular expression matching both is assigned acl-a only.
func TestConsumerGroupRegexResolvesDescribableTopics(t *testing.T) {
	n := startACLNode(t, t.TempDir(), groupProps(nil))
	adm := n.admin(t)
	if _, err := adm.CreateTopics(ctx(t), 2, 1, nil, "acl-a", "acl-b"); err != nil {
		t.Fatal(err)
	}
	allowACL(t, adm, kadm.NewACLs().Allow("User:alice").Topics("acl-a").Groups("rxacl").Operations(kadm.OpRead))
	td, err := adm.ListTopics(ctx(t), "acl-a", "acl-b")
	if err != nil {
		t.Fatal(err)
	}

	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "rxacl", "alice-member-0000000", 0, 30000
	regex := "acl-.*"
	req.SubscribedTopicRegex, req.Topics = &regex, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	resp, err := req.RequestWith(ctx(t), n.as(t, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.Assignment == nil {
		t.Fatalf("heartbeat: error %d %v, assignment %+v", resp.ErrorCode, resp.ErrorMessage, resp.Assignment)
	}
	if len(resp.Assignment.Topics) != 1 || resp.Assignment.Topics[0].TopicID != td["acl-a"].ID ||
		len(resp.Assignment.Topics[0].Partitions) != 2 {
		t.Fatalf("assigned %+v, want the two partitions of acl-a (%x) only", resp.Assignment.Topics, td["acl-a"].ID)
	}
}
