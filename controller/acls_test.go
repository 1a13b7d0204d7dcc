package controller

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/metadata"
)

func counterIDs() func() metadata.TopicID {
	var n byte
	return func() metadata.TopicID { n++; return metadata.TopicID{15: n} }
}

// Kafka: AclControlManager.createAcls / deleteAcls.
func TestCreateDeleteACLs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NewTopicID = counterIDs()
	c := New(cfg, metadata.New("c"), 0, 0)
	read := acl.Binding{ResourceType: acl.ResourceTopic, ResourceName: "t", PatternType: acl.PatternLiteral,
		Principal: "User:a", Host: "*", Operation: acl.OpRead, Permission: acl.PermissionAllow}
	write := read
	write.Operation = acl.OpWrite
	bad := read
	bad.Principal = "nocolon"
	recs, errs, err := c.CreateACLs([]acl.Binding{read, write, read, bad})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || errs[0] != nil || errs[1] != nil || errs[2] != nil || !errors.Is(errs[3], kerr.InvalidRequest) {
		t.Fatalf("records %v, errors %v", recs, errs)
	}
	// Creating an existing ACL again writes nothing and succeeds.
	if recs, errs, _ := c.CreateACLs([]acl.Binding{read}); len(recs) != 0 || errs[0] != nil {
		t.Fatalf("again: records %v, errors %v", recs, errs)
	}
	if c.Image().ACLs().Len() != 2 {
		t.Fatalf("%d ACLs, want 2", c.Image().ACLs().Len())
	}
	name := "t"
	byName := acl.Filter{ResourceType: acl.ResourceTopic, ResourceName: &name, PatternType: acl.PatternLiteral, Operation: acl.OpRead, Permission: acl.PermissionAny}
	any := acl.Filter{ResourceType: acl.ResourceAny, PatternType: acl.PatternAny, Operation: acl.OpAny, Permission: acl.PermissionAny}
	unknown := any
	unknown.Operation = acl.OpUnknown
	recs, out, err := c.DeleteACLs([]acl.Filter{byName, any, unknown})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(out[0].Deleted) != 1 || len(out[1].Deleted) != 2 || !errors.Is(out[2].Err, kerr.InvalidRequest) {
		t.Fatalf("records %v, outcome %+v", recs, out)
	}
	if c.Image().ACLs().Len() != 0 {
		t.Fatalf("%d ACLs left", c.Image().ACLs().Len())
	}
}
