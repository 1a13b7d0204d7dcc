package cluster

// AlterClientQuotas, versions 0-1 (KIP-546).
//
// Sets and removes client quota values (producer_byte_rate,
// consumer_byte_rate, request_percentage, controller_mutation_rate) of
// users, client ids, both, and their defaults, so that kafka-configs
// --alter --add-config producer_byte_rate=... --entity-type clients
// works. The controller's rules (controller.AlterClientQuotas) decide
// each entry on its own. In a cluster the request goes to the active
// controller (KIP-590) and the answer leaves once this broker's image
// shows every accepted change; a single node applies the records to its
// metadata file, persisted before the new image is published. Quotas
// are looked up in the current image by every request they bound
// (quota_enforce.go), so a change holds from the next request.
//
// With an authorizer, Kafka's rule: ALTER_CONFIGS on the cluster, else
// every entry is CLUSTER_AUTHORIZATION_FAILED and nothing changes.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/quorum"
)

func init() {
	register(&api{key: kmsg.AlterClientQuotas.Int16(), min: 0, max: 1, serve: serveAlterClientQuotas})
}

func serveAlterClientQuotas(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.AlterClientQuotasRequest)
	if err := b.clusterAuthError(r, acl.OpAlterConfigs); err != nil {
		return quotaFailure(req, err)
	}
	alts := quorum.QuotaAlterations(req)
	if b.ctrl == nil {
		var errs []error
		_, err := b.meta.change(func(cur *metadata.Image) ([]metadata.Record, error) {
			var recs []metadata.Record
			recs, errs = controller.PlanClientQuotas(cur, alts)
			if req.ValidateOnly {
				return nil, nil
			}
			return recs, nil
		})
		if err != nil {
			return quotaFailure(req, fmt.Errorf("%w: %v", kerr.KafkaStorageError, err))
		}
		b.logQuotaChanges(req, errs)
		return quorum.ClientQuotasResponse(req, errs, 0)
	}
	// The forward may wait for an election: never on a handler goroutine.
	go func() {
		resp := b.forwardAlterClientQuotas(req, alts)
		resp.SetVersion(r.Version)
		respond(bytesResponse(resp.AppendTo(nil)))
	}()
	return nil
}

// forwardAlterClientQuotas sends the request to the controller and
// waits for this broker's image to show each accepted entry.
func (b *Broker) forwardAlterClientQuotas(req *kmsg.AlterClientQuotasRequest, alts []controller.QuotaAlteration) kmsg.Response {
	ctx, cancel := b.controllerContext()
	defer cancel()
	kresp, err := b.ctrl.Do(ctx, req)
	if err != nil {
		return quotaFailure(req, fmt.Errorf("%w: %v", kerr.RequestTimedOut, err))
	}
	resp := kresp.(*kmsg.AlterClientQuotasResponse)
	if req.ValidateOnly || len(resp.Entries) != len(alts) {
		return resp
	}
	// An entity's last accepted entry is what its values end as.
	last := map[metadata.QuotaEntity]int{}
	for i, a := range alts {
		if e, err := metadata.QuotaEntityOf(a.Entity); err == nil && resp.Entries[i].ErrorCode == 0 {
			last[e] = i
		}
	}
	_, err = b.awaitImage(ctx, func(img *metadata.Image) bool {
		for e, i := range last {
			if !quotaShown(img, e, alts[i]) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return quotaFailure(req, err)
	}
	errs := make([]error, len(resp.Entries))
	for i, e := range resp.Entries {
		errs[i] = kerr.ErrorForCode(e.ErrorCode)
	}
	b.logQuotaChanges(req, errs)
	return resp
}

// quotaShown reports whether img holds what an accepted entry set.
func quotaShown(img *metadata.Image, e metadata.QuotaEntity, a controller.QuotaAlteration) bool {
	vals := img.ClientQuotas(e)
	final := map[string]controller.QuotaOp{} // a key's last operation wins
	for _, op := range a.Ops {
		final[op.Key] = op
	}
	for _, op := range final {
		v, ok := vals[op.Key]
		if op.Remove == ok || (!op.Remove && v != op.Value) {
			return false
		}
	}
	return true
}

func (b *Broker) logQuotaChanges(req *kmsg.AlterClientQuotasRequest, errs []error) {
	if req.ValidateOnly {
		return
	}
	for i, a := range quorum.QuotaAlterations(req) {
		if errs[i] != nil {
			continue
		}
		if e, err := metadata.QuotaEntityOf(a.Entity); err == nil {
			b.log.Info("client quotas altered", "entity", e.String())
		}
	}
}

// quotaFailure answers err for every entry of the request.
func quotaFailure(req *kmsg.AlterClientQuotasRequest, err error) kmsg.Response {
	errs := make([]error, len(req.Entries))
	for i := range errs {
		errs[i] = err
	}
	return quorum.ClientQuotasResponse(req, errs, 0)
}
