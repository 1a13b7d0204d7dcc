package cluster

// DeleteAcls, versions 1-3 (Kafka 4 removed v0, KIP-896): every ACL a
// filter matches leaves the cluster metadata and is listed under the
// filter. Needs Alter on the cluster (CLUSTER_AUTHORIZATION_FAILED for
// every filter); SECURITY_DISABLED without an authorizer;
// INVALID_REQUEST for a filter with an UNKNOWN field. In a cluster the
// filters go to the active controller (KIP-590); a single node writes
// the removals to its metadata file.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DeleteACLs.Int16(), min: 1, max: 3, serve: serveDeleteACLs})
}

func serveDeleteACLs(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	if err := b.aclAPIError(r, acl.OpAlter); err != nil {
		for range req.Filters {
			res := kmsg.NewDeleteACLsResponseResult()
			res.ErrorCode, res.ErrorMessage = errorCode(err), aclErrorMessage(err)
			resp.Results = append(resp.Results, res)
		}
		return resp
	}
	if b.ctrl != nil {
		resp.Results = b.forwardDeleteACLs(req)
		return resp
	}
	filters := make([]acl.Filter, len(req.Filters))
	for i, f := range req.Filters {
		filters[i] = acl.Filter{ResourceType: acl.ResourceType(f.ResourceType), ResourceName: f.ResourceName,
			PatternType: acl.PatternType(f.ResourcePatternType), Principal: f.Principal, Host: f.Host,
			Operation: acl.Operation(f.Operation), Permission: acl.Permission(f.PermissionType)}
	}
	var out []controller.ACLDeletion
	_, err := b.meta.change(func(cur *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, out = controller.PlanDeleteACLs(cur, filters)
		return recs, nil
	})
	for i := range filters {
		res := kmsg.NewDeleteACLsResponseResult()
		d := controller.ACLDeletion{Err: err}
		if err == nil {
			d = out[i]
		}
		res.ErrorCode, res.ErrorMessage = errorCode(d.Err), aclErrorMessage(d.Err)
		for _, e := range d.Deleted {
			res.MatchingACLs = append(res.MatchingACLs, matchingACL(e))
		}
		resp.Results = append(resp.Results, res)
	}
	return resp
}

func matchingACL(e acl.Entry) kmsg.DeleteACLsResponseResultMatchingACL {
	m := kmsg.NewDeleteACLsResponseResultMatchingACL()
	m.ResourceType, m.ResourceName = kmsg.ACLResourceType(e.ResourceType), e.ResourceName
	m.ResourcePatternType = kmsg.ACLResourcePatternType(e.PatternType)
	m.Principal, m.Host = e.Principal, e.Host
	m.Operation, m.PermissionType = kmsg.ACLOperation(e.Operation), kmsg.ACLPermissionType(e.Permission)
	return m
}

// forwardDeleteACLs sends the filters to the controller and waits until
// this broker's image no longer holds what it removed.
func (b *Broker) forwardDeleteACLs(req *kmsg.DeleteACLsRequest) []kmsg.DeleteACLsResponseResult {
	ctx, cancel := b.controllerContext()
	defer cancel()
	fwd := *req
	fwd.SetVersion(3)
	failed := func(err error) []kmsg.DeleteACLsResponseResult {
		out := make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
		for i := range out {
			out[i] = kmsg.NewDeleteACLsResponseResult()
			out[i].ErrorCode, out[i].ErrorMessage = errorCode(err), aclErrorMessage(err)
		}
		return out
	}
	kresp, err := b.ctrl.Do(ctx, &fwd)
	if err != nil {
		return failed(fmt.Errorf("%w: %v", kerr.RequestTimedOut, err))
	}
	results := kresp.(*kmsg.DeleteACLsResponse).Results
	var gone []acl.Binding
	for _, res := range results {
		for _, m := range res.MatchingACLs {
			gone = append(gone, acl.Binding{ResourceType: acl.ResourceType(m.ResourceType), ResourceName: m.ResourceName,
				PatternType: acl.PatternType(m.ResourcePatternType), Principal: m.Principal, Host: m.Host,
				Operation: acl.Operation(m.Operation), Permission: acl.Permission(m.PermissionType)})
		}
	}
	if err := b.awaitACLs(ctx, func(s *acl.Snapshot) bool {
		for _, g := range gone {
			if s.Contains(g) {
				return false
			}
		}
		return true
	}); err != nil {
		return failed(err)
	}
	return results
}
