package cluster

// DescribeAcls, versions 1-3 (Kafka 4 removed v0, KIP-896): the ACLs of
// the metadata image a filter selects, grouped by resource pattern.
// Needs Describe on the cluster (CLUSTER_AUTHORIZATION_FAILED);
// SECURITY_DISABLED when no authorizer is configured, INVALID_REQUEST
// for a filter with an UNKNOWN field, as Kafka's AclApis.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DescribeACLs.Int16(), min: 1, max: 3, serve: serveDescribeACLs})
}

func serveDescribeACLs(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	f := acl.Filter{ResourceType: acl.ResourceType(req.ResourceType), ResourceName: req.ResourceName,
		PatternType: acl.PatternType(req.ResourcePatternType), Principal: req.Principal, Host: req.Host,
		Operation: acl.Operation(req.Operation), Permission: acl.Permission(req.PermissionType)}
	err := b.aclAPIError(r, acl.OpDescribe)
	if err == nil {
		if verr := f.Validate(); verr != nil {
			err = fmt.Errorf("%w: %v", kerr.InvalidRequest, verr)
		}
	}
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), aclErrorMessage(err)
		return resp
	}
	b.authz.follow()
	for _, e := range b.authz.Snapshot().Match(f) {
		n := len(resp.Resources)
		if n == 0 || !samePattern(&resp.Resources[n-1], e.Binding) {
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName = kmsg.ACLResourceType(e.ResourceType), e.ResourceName
			res.ResourcePatternType = kmsg.ACLResourcePatternType(e.PatternType)
			resp.Resources = append(resp.Resources, res)
			n++
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host = e.Principal, e.Host
		a.Operation, a.PermissionType = kmsg.ACLOperation(e.Operation), kmsg.ACLPermissionType(e.Permission)
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, a)
	}
	return resp
}

// samePattern: the index orders ACLs by resource pattern, so one
// pattern's ACLs are consecutive.
func samePattern(res *kmsg.DescribeACLsResponseResource, b acl.Binding) bool {
	return acl.ResourceType(res.ResourceType) == b.ResourceType && res.ResourceName == b.ResourceName &&
		acl.PatternType(res.ResourcePatternType) == b.PatternType
}

// aclAPIError is SECURITY_DISABLED without an authorizer, else
// CLUSTER_AUTHORIZATION_FAILED unless op on the cluster is allowed
// (Describe to list ACLs, Alter to change them).
func (b *Broker) aclAPIError(r *vnet.Request, op acl.Operation) error {
	if b.authz == nil {
		return fmt.Errorf("%w: no authorizer is configured (authorizer.class.name)", kerr.SecurityDisabled)
	}
	return b.clusterAuthError(r, op)
}

// aclErrorMessage is err's text, nil for no error.
func aclErrorMessage(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}
