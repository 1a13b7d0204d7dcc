package cluster_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// request sends req as cl's principal straight to the node (no
// coordinator or leader lookup by the client first) and fails the test
// on a transport error.
func request[T kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request) T {
	t.Helper()
	resp, err := cl.SeedBrokers()[0].Request(ctx(t), req)
	if err != nil {
		t.Fatalf("%T: %v", req, err)
	}
	return resp.(T)
}

func fetchCode(t *testing.T, cl *kgo.Client, id [16]byte) int16 {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MaxBytes = 0, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return request[*kmsg.FetchResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
}

func listOffsetsCode(t *testing.T, cl *kgo.Client, topic string) int16 {
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return request[*kmsg.ListOffsetsResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
}

func metadataTopics(t *testing.T, cl *kgo.Client, topics ...string) map[string]int16 {
	req := kmsg.NewPtrMetadataRequest()
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
	}
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	out := map[string]int16{}
	for _, mt := range request[*kmsg.MetadataResponse](t, cl, req).Topics {
		out[*mt.Topic] = mt.ErrorCode
	}
	return out
}

func commitCode(t *testing.T, cl *kgo.Client, group, topic string) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset = 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorKey, find.CoordinatorKeys = group, []string{group}
	request[*kmsg.FindCoordinatorResponse](t, cl, find) // creates __consumer_offsets
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := request[*kmsg.OffsetCommitResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
		if (c != kerr.NotCoordinator.Code && c != kerr.CoordinatorLoadInProgress.Code) || time.Now().After(deadline) {
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func produceErr(t *testing.T, cl *kgo.Client, topic string) error {
	return cl.ProduceSync(ctx(t), &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
}

func code(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

// The ACL matrix: for each API, a principal with the ACL Kafka requires
// gets the data, one without gets Kafka's authorization error; DENY
// beats ALLOW; PREFIXED patterns; super users. Kafka: KafkaApis' authorize
// calls per API, KIP-430, KIP-679.
func TestACLMatrix(t *testing.T) {
	n := startACLNode(t, t.TempDir(), map[string]string{"auto.create.topics.enable": "false"})
	adm := n.admin(t)
	res, err := adm.CreateTopic(ctx(t), 1, 1, nil, "orders")
	if err != nil || res.Err != nil {
		t.Fatalf("admin creates orders: %v %v", err, res.Err)
	}
	ordersID := res.ID
	alice := n.as(t, "alice", kgo.DisableIdempotentWrite())
	bob := n.as(t, "bob", kgo.DisableIdempotentWrite())
	topic := func() *kadm.ACLBuilder {
		return kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(kadm.ACLPatternLiteral)
	}
	allowACL(t, adm, topic().Operations(kadm.OpWrite, kadm.OpRead, kadm.OpAlterConfigs))
	allowACL(t, adm, kadm.NewACLs().Allow("User:alice").Groups("app-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead))
	allowACL(t, adm, kadm.NewACLs().Allow("User:alice").Topics("alice-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpCreate, kadm.OpDelete))
	tac, gac, cac := kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code

	t.Run("Produce", func(t *testing.T) {
		if err := produceErr(t, alice, "orders"); err != nil {
			t.Errorf("alice: %v", err)
		}
		if err := produceErr(t, bob, "orders"); code(err) != tac {
			t.Errorf("bob: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
	})
	t.Run("Fetch", func(t *testing.T) {
		if c := fetchCode(t, alice, ordersID); c != 0 {
			t.Errorf("alice: %d", c)
		}
		if c := fetchCode(t, bob, ordersID); c != tac {
			t.Errorf("bob: %d", c)
		}
		// Kafka resolves topic ids before it authorizes.
		if c := fetchCode(t, bob, [16]byte{15: 9}); c != kerr.UnknownTopicID.Code {
			t.Errorf("bob, an unknown topic id: %d", c)
		}
	})
	t.Run("ListOffsets", func(t *testing.T) {
		if a, b := listOffsetsCode(t, alice, "orders"), listOffsetsCode(t, bob, "orders"); a != 0 || b != tac {
			t.Errorf("alice %d, bob %d", a, b)
		}
	})
	t.Run("Metadata", func(t *testing.T) {
		if got := metadataTopics(t, alice); got["orders"] != 0 || len(got) != 1 {
			t.Errorf("alice, every topic: %v", got)
		}
		if got := metadataTopics(t, bob); len(got) != 0 {
			t.Errorf("bob, every topic: %v, want none", got)
		}
		if got := metadataTopics(t, bob, "orders"); got["orders"] != tac {
			t.Errorf("bob, orders: %v", got)
		}
	})
	t.Run("OffsetCommit", func(t *testing.T) {
		if c := commitCode(t, alice, "app-1", "orders"); c != 0 {
			t.Errorf("alice, app-1: %d", c)
		}
		if c := commitCode(t, alice, "other", "orders"); c != gac {
			t.Errorf("alice, other group: %d", c)
		}
		if c := commitCode(t, bob, "app-1", "orders"); c != gac {
			t.Errorf("bob: %d", c)
		}
	})
	t.Run("OffsetFetch", func(t *testing.T) {
		ao, err := kadm.NewClient(alice).FetchOffsets(ctx(t), "app-1")
		if err != nil || ao.Error() != nil {
			t.Errorf("alice: %v %v", err, ao.Error())
		}
		if _, err := kadm.NewClient(bob).FetchOffsets(ctx(t), "app-1"); code(err) != gac {
			t.Errorf("bob: %v", err)
		}
	})
	t.Run("CreateDeleteTopics", func(t *testing.T) {
		res, err := kadm.NewClient(alice).CreateTopic(ctx(t), 1, 1, nil, "alice-new")
		if err != nil || res.Err != nil {
			t.Errorf("alice, alice-new: %v %v", err, res.Err)
		}
		if res, _ := kadm.NewClient(alice).CreateTopic(ctx(t), 1, 1, nil, "bobs"); code(res.Err) != tac {
			t.Errorf("alice, bobs: %v", res.Err)
		}
		if res, _ := kadm.NewClient(bob).DeleteTopic(ctx(t), "alice-new"); code(res.Err) != tac {
			t.Errorf("bob deletes alice-new: %v", res.Err)
		}
		if res, err := kadm.NewClient(alice).DeleteTopic(ctx(t), "alice-new"); err != nil || res.Err != nil {
			t.Errorf("alice deletes alice-new: %v %v", err, res.Err)
		}
	})
	t.Run("DescribeConfigs", func(t *testing.T) {
		// AlterConfigs implies DescribeConfigs.
		rc, err := kadm.NewClient(alice).DescribeTopicConfigs(ctx(t), "orders")
		if err != nil || rc[0].Err != nil {
			t.Errorf("alice: %v %v", err, rc)
		}
		req := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "orders"
		req.Resources = append(req.Resources, rr)
		if got := request[*kmsg.DescribeConfigsResponse](t, bob, req).Resources[0]; got.ErrorCode != tac || len(got.Configs) != 0 {
			t.Errorf("bob: %d, %d configs", got.ErrorCode, len(got.Configs))
		}
	})
	t.Run("InitProducerId", func(t *testing.T) {
		// KIP-679: Write on any topic is enough for an idempotent producer.
		if resp := request[*kmsg.InitProducerIDResponse](t, alice, kmsg.NewPtrInitProducerIDRequest()); resp.ErrorCode != 0 {
			t.Errorf("alice: %d", resp.ErrorCode)
		}
		if resp := request[*kmsg.InitProducerIDResponse](t, bob, kmsg.NewPtrInitProducerIDRequest()); resp.ErrorCode != cac {
			t.Errorf("bob: %d", resp.ErrorCode)
		}
	})
	t.Run("DescribeCluster", func(t *testing.T) {
		// Anyone may describe the cluster; KIP-430 says what they may do.
		req := kmsg.NewPtrDescribeClusterRequest()
		req.IncludeClusterAuthorizedOperations = true
		if resp := request[*kmsg.DescribeClusterResponse](t, bob, req); resp.ErrorCode != 0 || resp.ClusterAuthorizedOperations != 0 || len(resp.Brokers) != 1 {
			t.Errorf("bob: %d, operations %b, %d brokers", resp.ErrorCode, resp.ClusterAuthorizedOperations, len(resp.Brokers))
		}
		resp := request[*kmsg.DescribeClusterResponse](t, n.as(t, "admin"), req)
		if resp.ErrorCode != 0 || resp.ClusterAuthorizedOperations&(1<<7) == 0 {
			t.Errorf("admin: %d, operations %b", resp.ErrorCode, resp.ClusterAuthorizedOperations)
		}
	})
	t.Run("FollowerFetch", func(t *testing.T) {
		// A fetch from a replica needs ClusterAction on the cluster.
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaState.ID, req.ReplicaState.Epoch = 2, 1
		rt := kmsg.NewFetchRequestTopic()
		rt.TopicID = ordersID
		rt.Partitions = append(rt.Partitions, kmsg.NewFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		if c := request[*kmsg.FetchResponse](t, alice, req).Topics[0].Partitions[0].ErrorCode; c != tac {
			t.Errorf("alice as a follower: %d", c)
		}
	})
	t.Run("AuthorizedOperations", func(t *testing.T) { // KIP-430
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("orders")
		req.Topics, req.IncludeTopicAuthorizedOperations = append(req.Topics, rt), true
		got := request[*kmsg.MetadataResponse](t, alice, req).Topics[0].AuthorizedOperations
		// Read 3, Write 4, Describe 8 (implied), DescribeConfigs 10 (implied), AlterConfigs 11.
		if want := int32(1<<3 | 1<<4 | 1<<8 | 1<<10 | 1<<11); got != want {
			t.Errorf("alice's operations on orders: %b, want %b", got, want)
		}
	})
	t.Run("DenyBeatsAllow", func(t *testing.T) {
		allowACL(t, adm, kadm.NewACLs().Deny("User:alice").DenyHosts().Topics("ord").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead))
		if c := fetchCode(t, alice, ordersID); c != tac {
			t.Errorf("alice after a PREFIXED DENY of Read: %d", c)
		}
		if err := produceErr(t, alice, "orders"); err != nil {
			t.Errorf("alice may still write: %v", err)
		}
		// A DENY of Read does not deny Describe: Metadata still lists it.
		if got := metadataTopics(t, alice); !slices.Contains(keys(got), "orders") {
			t.Errorf("alice's topics: %v", got)
		}
	})
	t.Run("SuperUser", func(t *testing.T) {
		admin := n.as(t, "admin", kgo.DisableIdempotentWrite())
		if err := produceErr(t, admin, "orders"); err != nil {
			t.Errorf("admin: %v", err)
		}
		if c := fetchCode(t, admin, ordersID); c != 0 {
			t.Errorf("admin fetch: %d", c)
		}
	})
}

// Kafka: Metadata creates a missing topic only for a principal with
// Create on the cluster or the topic; others get
// TOPIC_AUTHORIZATION_FAILED.
func TestACLAutoCreate(t *testing.T) {
	n := startACLNode(t, t.TempDir(), map[string]string{"auto.create.topics.enable": "true"})
	allowACL(t, n.admin(t), kadm.NewACLs().Allow("User:alice").Topics("auto-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpCreate))
	alice := n.as(t, "alice")
	req := kmsg.NewPtrMetadataRequest()
	for _, name := range []string{"auto-1", "other"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	req.AllowAutoTopicCreation = true
	request[*kmsg.MetadataResponse](t, alice, req)
	got := metadataTopics(t, n.as(t, "admin"), "auto-1", "other")
	if got["auto-1"] != 0 || got["other"] != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("after alice's Metadata: %v, want auto-1 created and other not", got)
	}
	if codes := metadataTopics(t, alice, "other"); codes["other"] != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("alice, other: %v", codes)
	}
}

func keys(m map[string]int16) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
