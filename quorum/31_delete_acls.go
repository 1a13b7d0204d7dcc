package quorum

// DeleteAcls (31), every version kmsg knows, forwarded by brokers
// (KIP-590): every ACL a filter matches is removed with a
// RemoveAccessControlEntryRecord (controller.DeleteACLs) and listed
// under the filter; INVALID_REQUEST for a filter with an UNKNOWN field.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.DeleteACLs.Int16(), handle: handleDeleteACLs,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrDeleteACLsResponse()
			for range kreq.(*kmsg.DeleteACLsRequest).Filters {
				r := kmsg.NewDeleteACLsResponseResult()
				r.ErrorCode = code
				resp.Results = append(resp.Results, r)
			}
			return resp
		}})
}

func handleDeleteACLs(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteACLsRequest)
	filters := make([]acl.Filter, len(req.Filters))
	for i, f := range req.Filters {
		filters[i] = acl.Filter{ResourceType: acl.ResourceType(f.ResourceType), ResourceName: f.ResourceName,
			PatternType: acl.PatternType(f.ResourcePatternType), Principal: f.Principal, Host: f.Host,
			Operation: acl.Operation(f.Operation), Permission: acl.Permission(f.PermissionType)}
	}
	recs, out, err := c.DeleteACLs(filters)
	if err != nil {
		return nil, nil, err
	}
	resp := kmsg.NewPtrDeleteACLsResponse()
	for _, d := range out {
		r := kmsg.NewDeleteACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = errorCode(d.Err), errorMessage(d.Err)
		for _, e := range d.Deleted {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceType(e.ResourceType), e.ResourceName, kmsg.ACLResourcePatternType(e.PatternType)
			m.Principal, m.Host = e.Principal, e.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(e.Operation), kmsg.ACLPermissionType(e.Permission)
			r.MatchingACLs = append(r.MatchingACLs, m)
		}
		resp.Results = append(resp.Results, r)
	}
	return recs, resp, nil
}
