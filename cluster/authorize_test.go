package cluster_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// aclNode is a broker with authorization on: a SASL_PLAINTEXT listener
// with PLAIN users admin (a super user), alice and bob, and a PLAINTEXT
// listener whose clients are User:ANONYMOUS.
type aclNode struct {
	*testBroker
	sasl, plaintext string
}

const jaasACL = `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";`

func startACLNode(t *testing.T, dir string, extra map[string]string) *aclNode {
	t.Helper()
	n := &aclNode{sasl: fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t)), plaintext: fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))}
	props := map[string]string{
		"listeners":                  "SASL_PLAINTEXT://" + n.sasl + ",PLAINTEXT://" + n.plaintext,
		"inter.broker.listener.name": "PLAINTEXT",
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":  jaasACL,
		"authorizer.class.name":                                "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                                          "User:admin",
	}
	for k, v := range extra {
		props[k] = v
	}
	n.testBroker = startBroker(t, dir, props)
	return n
}

// as is a client of user (password user-secret) on the SASL listener.
func (n *aclNode) as(t *testing.T, user string, opts ...kgo.Opt) *kgo.Client {
	return client(t, n.sasl, append(opts, kgo.SASL(plain.Auth{User: user, Pass: user + "-secret"}.AsMechanism()))...)
}

func (n *aclNode) admin(t *testing.T) *kadm.Client { return kadm.NewClient(n.as(t, "admin")) }

// allowACL grants principal op on a resource through CreateAcls, as
// kafka-acls --add does.
func allowACL(t *testing.T, adm *kadm.Client, b *kadm.ACLBuilder) {
	t.Helper()
	res, err := adm.CreateACLs(ctx(t), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("CreateAcls %v: %v", r, r.Err)
		}
	}
}

// Kafka: KIP-140 (CreateAcls, DescribeAcls, DeleteAcls) as kafka-acls
// uses them, the ACLs kept in the metadata across a restart.
func TestACLAdmin(t *testing.T) {
	dir := t.TempDir()
	n := startACLNode(t, dir, nil)
	adm := n.admin(t)
	allowACL(t, adm, kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead, kadm.OpDescribe))
	allowACL(t, adm, kadm.NewACLs().Deny("User:bob").DenyHosts().Topics("team-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite))

	// kafka-acls --list --topic orders: the literal and the matching ACLs.
	described, err := adm.DescribeACLs(ctx(t), kadm.NewACLs().Topics("orders").ResourcePatternType(kadm.ACLPatternMatch).
		Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts())
	if err != nil || len(described) != 1 || described[0].Err != nil || len(described[0].Described) != 2 {
		t.Fatalf("DescribeAcls: %+v %v", described, err)
	}

	// A client without Alter on the cluster may not add ACLs.
	res, err := kadm.NewClient(n.as(t, "alice")).CreateACLs(ctx(t), kadm.NewACLs().Allow("User:alice").Topics("x").
		ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpAll))
	if err != nil || len(res) != 1 || !errors.Is(res[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("CreateAcls by alice: %+v %v", res, err)
	}
	// An invalid binding is INVALID_REQUEST.
	res, err = adm.CreateACLs(ctx(t), kadm.NewACLs().Allow("alice").Topics("t").ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpAlter))
	if err != nil || len(res) != 1 || !errors.Is(res[0].Err, kerr.InvalidRequest) {
		t.Fatalf("CreateAcls with a principal without a type: %+v %v", res, err)
	}

	// The ACLs survive a restart: they are in the metadata file.
	n.stop(t)
	old := n
	n = startACLNode(t, dir, map[string]string{"listeners": "SASL_PLAINTEXT://" + old.sasl + ",PLAINTEXT://" + old.plaintext})
	n.sasl, n.plaintext = old.sasl, old.plaintext
	adm = n.admin(t)
	deleted, err := adm.DeleteACLs(ctx(t), kadm.NewACLs().Deny("User:bob").DenyHosts().Topics("team-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite))
	if err != nil || len(deleted) != 1 || deleted[0].Err != nil || len(deleted[0].Deleted) != 1 {
		t.Fatalf("DeleteAcls: %+v %v", deleted, err)
	}
	all, err := adm.DescribeACLs(ctx(t), kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts())
	if err != nil || len(all) != 1 || len(all[0].Described) != 2 {
		t.Fatalf("after the deletion: %+v %v", all, err)
	}
}

// Kafka: without an authorizer the ACL APIs answer SECURITY_DISABLED.
func TestACLAPIsWithoutAuthorizer(t *testing.T) {
	tb := startBroker(t, t.TempDir(), nil)
	res, err := kadm.NewClient(client(t, tb.addr)).CreateACLs(ctx(t), kadm.NewACLs().Allow("User:a").Topics("t").
		ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead))
	if err != nil || len(res) != 1 || !errors.Is(res[0].Err, kerr.SecurityDisabled) {
		t.Fatalf("CreateAcls: %+v %v", res, err)
	}
}
