package cluster_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// In a cluster, CreateAcls and DeleteAcls sent to any broker reach the
// active controller, which writes the records every node replays; a
// replicated topic keeps replicating under the authorizer when the
// inter-broker principal (User:ANONYMOUS on the PLAINTEXT inter-broker
// listener) is a super user. Kafka: KIP-590 forwarding; the
// inter-broker principal needs ClusterAction (or super.users).
func TestThreeNodesACLs(t *testing.T) {
	tc := startQuorumCluster(t, 3, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:ANONYMOUS",
	})
	tc.waitBrokers(3)
	adm := func(i int) *kadm.Client { return kadm.NewClient(client(t, tc.addrs[i])) }
	allowACL(t, adm(1), kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead))
	listAll := kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts()
	count := func(i int) int {
		res, err := adm(i).DescribeACLs(ctx(t), listAll)
		if err != nil || len(res) != 1 || res[0].Err != nil {
			t.Fatalf("DescribeAcls at node %d: %+v %v", i+1, res, err)
		}
		return len(res[0].Described)
	}
	if count(1) != 1 {
		t.Fatal("the broker that forwarded the creation answered before its image held the ACL")
	}
	waitWithin(t, 10*time.Second, "the ACL on node 3", func() bool { return count(2) == 1 })

	if res, err := adm(0).CreateTopic(ctx(t), 1, 3, nil, "replicated"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	produceSync(t, client(t, tc.addrs[0], kgo.RequiredAcks(kgo.AllISRAcks())), &kgo.Record{Topic: "replicated", Value: []byte("v")})

	deleted, err := adm(0).DeleteACLs(ctx(t), listAll)
	if err != nil || len(deleted) != 1 || len(deleted[0].Deleted) != 1 {
		t.Fatalf("DeleteAcls: %+v %v", deleted, err)
	}
	waitWithin(t, 10*time.Second, "no ACL on any node", func() bool { return count(0)+count(1)+count(2) == 0 })
}
