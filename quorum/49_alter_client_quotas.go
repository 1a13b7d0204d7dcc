package quorum

// AlterClientQuotas (49), every version kmsg knows (KIP-546): client
// quota values set and removed through ClientQuotaRecords, with Kafka's
// validation (controller.AlterClientQuotas), each entry answered on its
// own. Brokers forward it here (KIP-590).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.AlterClientQuotas.Int16(), handle: handleAlterClientQuotas,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			req := kreq.(*kmsg.AlterClientQuotasRequest)
			return ClientQuotasResponse(req, make([]error, len(req.Entries)), code)
		}})
}

func handleAlterClientQuotas(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.AlterClientQuotasRequest)
	recs, errs, err := c.AlterClientQuotas(QuotaAlterations(req), req.ValidateOnly)
	if err != nil {
		return nil, nil, err
	}
	return recs, ClientQuotasResponse(req, errs, 0), nil
}

// QuotaAlterations are the request's entries as the controller package
// names them.
func QuotaAlterations(req *kmsg.AlterClientQuotasRequest) []controller.QuotaAlteration {
	out := make([]controller.QuotaAlteration, len(req.Entries))
	for i, e := range req.Entries {
		for _, d := range e.Entity {
			out[i].Entity = append(out[i].Entity, metadata.QuotaEntityData{Type: d.Type, Name: d.Name})
		}
		for _, op := range e.Ops {
			out[i].Ops = append(out[i].Ops, controller.QuotaOp{Key: op.Key, Value: op.Value, Remove: op.Remove})
		}
	}
	return out
}

// ClientQuotasResponse answers each entry of req with its error, or
// with code when code is not 0 (a refusal of the whole request).
func ClientQuotasResponse(req *kmsg.AlterClientQuotasRequest, errs []error, code int16) *kmsg.AlterClientQuotasResponse {
	resp := kmsg.NewPtrAlterClientQuotasResponse()
	for i, e := range req.Entries {
		r := kmsg.NewAlterClientQuotasResponseEntry()
		for _, d := range e.Entity {
			re := kmsg.NewAlterClientQuotasResponseEntryEntity()
			re.Type, re.Name = d.Type, d.Name
			r.Entity = append(r.Entity, re)
		}
		r.ErrorCode, r.ErrorMessage = errorCode(errs[i]), errorMessage(errs[i])
		if code != 0 {
			r.ErrorCode, r.ErrorMessage = code, nil
		}
		resp.Entries = append(resp.Entries, r)
	}
	return resp
}
