package cluster

// CreateAcls, versions 1-3 (Kafka 4 removed v0, KIP-896): each creation
// becomes an ACL in the cluster metadata; an ACL that exists already
// succeeds unchanged. Needs Alter on the cluster
// (CLUSTER_AUTHORIZATION_FAILED for every creation); SECURITY_DISABLED
// without an authorizer; INVALID_REQUEST for a binding Kafka refuses.
// In a cluster the creations go to the active controller (KIP-590) and
// the answer waits for this broker's image to show them; a single node
// writes them to its metadata file.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/internal/kuuid"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.CreateACLs.Int16(), min: 1, max: 3, serve: serveCreateACLs})
}

func serveCreateACLs(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.CreateACLsRequest)
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	bindings := make([]acl.Binding, len(req.Creations))
	for i, c := range req.Creations {
		bindings[i] = acl.Binding{ResourceType: acl.ResourceType(c.ResourceType), ResourceName: c.ResourceName,
			PatternType: acl.PatternType(c.ResourcePatternType), Principal: c.Principal, Host: c.Host,
			Operation: acl.Operation(c.Operation), Permission: acl.Permission(c.PermissionType)}
	}
	var errs []error
	if err := b.aclAPIError(r, acl.OpAlter); err != nil {
		errs = make([]error, len(bindings))
		for i := range errs {
			errs[i] = err
		}
	} else {
		errs = b.createACLs(req, bindings)
	}
	for _, err := range errs {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode, res.ErrorMessage = errorCode(err), aclErrorMessage(err)
		resp.Results = append(resp.Results, res)
	}
	return resp
}

// createACLs creates bindings through the controller or in the metadata
// file; one error per binding.
func (b *Broker) createACLs(req *kmsg.CreateACLsRequest, bindings []acl.Binding) []error {
	if b.ctrl == nil {
		var errs []error
		_, err := b.meta.change(func(cur *metadata.Image) ([]metadata.Record, error) {
			var recs []metadata.Record
			recs, errs = controller.PlanCreateACLs(cur, bindings, randomACLID)
			return recs, nil
		})
		return fillErrors(errs, len(bindings), err)
	}
	ctx, cancel := b.controllerContext()
	defer cancel()
	fwd := *req
	fwd.SetVersion(3)
	kresp, err := b.ctrl.Do(ctx, &fwd)
	if err != nil {
		return fillErrors(nil, len(bindings), fmt.Errorf("%w: %v", kerr.RequestTimedOut, err))
	}
	results := kresp.(*kmsg.CreateACLsResponse).Results
	if len(results) != len(bindings) {
		return fillErrors(nil, len(bindings), fmt.Errorf("%w: the controller answered %d creations for %d", kerr.UnknownServerError, len(results), len(bindings)))
	}
	errs := make([]error, len(bindings))
	var created []acl.Binding
	for i, res := range results {
		if errs[i] = controllerError(res.ErrorCode, res.ErrorMessage); errs[i] == nil {
			created = append(created, bindings[i])
		}
	}
	return fillErrors(errs, len(bindings), b.awaitACLs(ctx, func(s *acl.Snapshot) bool {
		for _, c := range created {
			if !s.Contains(c) {
				return false
			}
		}
		return true
	}))
}

// awaitACLs waits until this broker's image has ACLs that satisfy done.
func (b *Broker) awaitACLs(ctx context.Context, done func(*acl.Snapshot) bool) error {
	_, err := b.awaitImage(ctx, func(img *metadata.Image) bool {
		return done(controller.ACLSnapshot(img))
	})
	return err
}

// fillErrors returns errs (or n nils) with err, when not nil, in every
// place.
func fillErrors(errs []error, n int, err error) []error {
	if errs == nil {
		errs = make([]error, n)
	}
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}

// randomACLID is Kafka's Uuid.randomUuid.
func randomACLID() [16]byte { return kuuid.Random() }
