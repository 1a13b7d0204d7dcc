package quorum

// CreateAcls (30), every version kmsg knows, forwarded by brokers
// (KIP-590): each creation becomes an AccessControlEntryRecord
// (controller.CreateACLs, Kafka's AclControlManager); INVALID_REQUEST
// for a binding Kafka refuses.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.CreateACLs.Int16(), handle: handleCreateACLs,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrCreateACLsResponse()
			for range kreq.(*kmsg.CreateACLsRequest).Creations {
				r := kmsg.NewCreateACLsResponseResult()
				r.ErrorCode = code
				resp.Results = append(resp.Results, r)
			}
			return resp
		}})
}

func handleCreateACLs(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.CreateACLsRequest)
	bindings := make([]acl.Binding, len(req.Creations))
	for i, cr := range req.Creations {
		bindings[i] = acl.Binding{ResourceType: acl.ResourceType(cr.ResourceType), ResourceName: cr.ResourceName,
			PatternType: acl.PatternType(cr.ResourcePatternType), Principal: cr.Principal, Host: cr.Host,
			Operation: acl.Operation(cr.Operation), Permission: acl.Permission(cr.PermissionType)}
	}
	recs, errs, err := c.CreateACLs(bindings)
	if err != nil {
		return nil, nil, err
	}
	resp := kmsg.NewPtrCreateACLsResponse()
	for _, e := range errs {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = errorCode(e), errorMessage(e)
		resp.Results = append(resp.Results, r)
	}
	return recs, resp, nil
}
