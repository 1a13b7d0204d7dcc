package cluster

// Authorization with Kafka's StandardAuthorizer semantics (package acl)
// when authorizer.class.name names it; off (everything allowed, the ACL
// APIs answering SECURITY_DISABLED) otherwise, as in Kafka.
//
// The ACLs are the metadata image's (AccessControlEntryRecords, from the
// controller's log in a cluster, from the metadata file on a single
// node). The index the decisions read is rebuilt when a request first
// sees an image whose ACLs changed, and swapped atomically: a decision
// takes no lock.
//
// The principal is the connection's (security.principal): the SASL
// user, the TLS client's subject DN, else User:ANONYMOUS; the host is
// the client's IP address. Brokers reach each other on the
// inter-broker listener, which Varve keeps PLAINTEXT (security.go), so
// a follower's Fetch carries User:ANONYMOUS, as Kafka's would on a
// PLAINTEXT listener: as in Kafka, the inter-broker principal needs
// ClusterAction on the cluster, or a place in super.users, for
// replication to work under ACLs. Changes a broker forwards to the
// controller are authorized by that broker before they leave; the
// controller listener is not reachable by clients' principals.

import (
	"encoding/hex"
	stdnet "net"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/config"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

// authorizer decides requests against the ACLs of the current image.
type authorizer struct {
	*acl.Authorizer
	image func() *metadata.Image        // the current image
	src   atomic.Pointer[metadata.ACLs] // the ACLs the index was built from
	mu    sync.Mutex                    // serialises rebuilds
}

// newAuthorizer returns nil when authorization is off.
func newAuthorizer(cfg *config.Broker, image func() *metadata.Image) *authorizer {
	if cfg.AuthorizerClassName != config.StandardAuthorizer {
		return nil
	}
	return &authorizer{image: image, Authorizer: acl.NewAuthorizer(acl.Config{
		SuperUsers: acl.ParseSuperUsers(cfg.SuperUsers), AllowEveryoneIfNoACL: cfg.AllowEveryoneIfNoACLFound})}
}

// follow rebuilds the index when the current image's ACLs are not the
// indexed ones. A rebuild reads the image under mu, so rebuilds index
// images in the order they were published and never go back to older
// ACLs.
func (a *authorizer) follow() {
	if a.src.Load() == a.image().ACLs() {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	img := a.image()
	if a.src.Load() == img.ACLs() {
		return
	}
	a.Store(controller.ACLSnapshot(img))
	a.src.Store(img.ACLs())
}

// authorized reports whether the request's principal may perform op on
// the resource; always true when authorization is off.
func (b *Broker) authorized(r *vnet.Request, op acl.Operation, rt acl.ResourceType, name string) bool {
	if b.authz == nil {
		return true
	}
	b.authz.follow()
	return b.authz.Authorize(b.sec.principal(r), aclHost(r), op, rt, name)
}

// authorizedCluster is authorized on the cluster resource.
func (b *Broker) authorizedCluster(r *vnet.Request, op acl.Operation) bool {
	return b.authorized(r, op, acl.ResourceCluster, acl.ClusterName)
}

// topicAuthError is TOPIC_AUTHORIZATION_FAILED unless op on topic is
// allowed.
func (b *Broker) topicAuthError(r *vnet.Request, op acl.Operation, topic string) error {
	if b.authorized(r, op, acl.ResourceTopic, topic) {
		return nil
	}
	return kerr.TopicAuthorizationFailed
}

// groupAuthError is GROUP_AUTHORIZATION_FAILED unless op on group is
// allowed.
func (b *Broker) groupAuthError(r *vnet.Request, op acl.Operation, group string) error {
	if b.authorized(r, op, acl.ResourceGroup, group) {
		return nil
	}
	return kerr.GroupAuthorizationFailed
}

// clusterAuthError is CLUSTER_AUTHORIZATION_FAILED unless op on the
// cluster is allowed.
func (b *Broker) clusterAuthError(r *vnet.Request, op acl.Operation) error {
	if b.authorizedCluster(r, op) {
		return nil
	}
	return kerr.ClusterAuthorizationFailed
}

// aclHost is the client's IP address, as Kafka's ACL hosts name it.
func aclHost(r *vnet.Request) string {
	switch a := r.Conn.Remote.(type) {
	case *stdnet.TCPAddr:
		return a.IP.String()
	case nil:
		return ""
	}
	host, _, err := stdnet.SplitHostPort(r.Conn.Remote.String())
	if err != nil {
		return r.Conn.Remote.String()
	}
	return host
}

// authorizedOperations is KIP-430's bit field of the operations the
// request's principal may perform on a resource: bit n set for the
// allowed operation of code n, out of ops.
func (b *Broker) authorizedOperations(r *vnet.Request, rt acl.ResourceType, name string, ops []acl.Operation) int32 {
	var bits int32
	for _, op := range ops {
		if b.authorized(r, op, rt, name) {
			bits |= 1 << op
		}
	}
	return bits
}

// Kafka's operations per resource type, as KIP-430 reports them
// (AclEntry.supportedOperations).
var (
	topicOperations = []acl.Operation{acl.OpRead, acl.OpWrite, acl.OpCreate, acl.OpDescribe, acl.OpDelete, acl.OpAlter,
		acl.OpDescribeConfigs, acl.OpAlterConfigs}
	groupOperations   = []acl.Operation{acl.OpRead, acl.OpDescribe, acl.OpDelete}
	clusterOperations = []acl.Operation{acl.OpCreate, acl.OpClusterAction, acl.OpDescribeConfigs, acl.OpAlterConfigs,
		acl.OpIdempotentWrite, acl.OpAlter, acl.OpDescribe}
)

// aclMeta is an ACL in the single node's metadata file.
type aclMeta struct {
	ID           string `json:"id"` // 32 hex digits
	ResourceType int8   `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  int8   `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    int8   `json:"operation"`
	Permission   int8   `json:"permission_type"`
}

func aclMetas(img *metadata.Image) []aclMeta {
	var out []aclMeta
	for r := range img.ACLs().All() {
		out = append(out, aclMeta{ID: hex.EncodeToString(r.ID[:]), ResourceType: r.ResourceType, ResourceName: r.ResourceName,
			PatternType: r.PatternType, Principal: r.Principal, Host: r.Host, Operation: r.Operation, Permission: r.PermissionType})
	}
	return out
}

// aclRecords are the file's ACLs as records; an id that does not decode
// becomes the zero id, which Apply refuses, so a damaged file stops
// start-up rather than losing an ACL silently.
func aclRecords(ms []aclMeta) []metadata.Record {
	var recs []metadata.Record
	for _, m := range ms {
		r := metadata.AccessControlEntryRecord{ResourceType: m.ResourceType, ResourceName: m.ResourceName, PatternType: m.PatternType,
			Principal: m.Principal, Host: m.Host, Operation: m.Operation, PermissionType: m.Permission}
		if id, err := hex.DecodeString(m.ID); err == nil && len(id) == 16 {
			copy(r.ID[:], id)
		}
		recs = append(recs, r)
	}
	return recs
}
