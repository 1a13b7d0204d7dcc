package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateAcls and DeleteAcls through the active controller reach every
// node's image as records. Kafka: KIP-590 forwarding; AclControlManager.
func TestACLAPIs(t *testing.T) {
	c := newTestCluster(t, 20<<20)
	leader := c.active(5 * time.Second)
	client := c.nodes[(leader+1)%3].Client()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	create := kmsg.NewPtrCreateACLsRequest()
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral
	cr.Principal, cr.Host, cr.Operation, cr.PermissionType = "User:alice", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	bad := cr
	bad.ResourceType, bad.ResourceName = kmsg.ACLResourceTypeCluster, "not-kafka-cluster"
	create.Creations = append(create.Creations, cr, bad)
	resp, err := client.Do(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	res := resp.(*kmsg.CreateACLsResponse).Results
	if len(res) != 2 || res[0].ErrorCode != 0 || res[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("CreateAcls answered %+v", res)
	}
	c.waitFor(5*time.Second, "the ACL on every node", func() bool {
		for _, n := range c.nodes {
			if n.Publisher().Image().ACLs().Len() != 1 {
				return false
			}
		}
		return true
	})

	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = append(del.Filters, f)
	resp, err = client.Do(ctx, del)
	if err != nil {
		t.Fatal(err)
	}
	dr := resp.(*kmsg.DeleteACLsResponse).Results
	if len(dr) != 1 || dr[0].ErrorCode != 0 || len(dr[0].MatchingACLs) != 1 || dr[0].MatchingACLs[0].Principal != "User:alice" {
		t.Fatalf("DeleteAcls answered %+v", dr)
	}
	c.waitFor(5*time.Second, "no ACL on any node", func() bool {
		for _, n := range c.nodes {
			if n.Publisher().Image().ACLs().Len() != 0 {
				return false
			}
		}
		return true
	})
}
