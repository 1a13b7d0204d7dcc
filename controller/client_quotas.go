package controller

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/metadata"
)

// AlterClientQuotas (api key 49, KIP-546) as Kafka's
// ClientQuotaControlManager.alterClientQuotas decides it: each entry (an
// entity and its operations) is validated and answered on its own; an
// accepted entry becomes ClientQuotaRecords, one per value set or
// removed, and nothing for a removal of a value the entity does not have
// or a value set to what it already is.
//
// Errors, per entry, all INVALID_REQUEST as Kafka's:
//   - an empty entity, a type named twice, a type other than user and
//     client-id, an empty (not default) name;
//   - a key other than producer_byte_rate, consumer_byte_rate,
//     request_percentage and controller_mutation_rate;
//   - a value not above 0, or a fraction for a byte rate (Kafka's LONG
//     quota keys).
//
// IP entities (connection_creation_rate, KIP-612) are refused with a
// message saying so: this node enforces no per-IP connection rate quota,
// and an accepted quota that changes nothing would mislead.

// Kafka's client quota keys (QuotaConfig).
const (
	QuotaProducerByteRate       = "producer_byte_rate"
	QuotaConsumerByteRate       = "consumer_byte_rate"
	QuotaRequestPercentage      = "request_percentage"
	QuotaControllerMutationRate = "controller_mutation_rate"
)

// quotaKeyIntegral tells, for each key a user or client-id entity may
// have, whether its values are whole (Kafka's LONG keys) or not (DOUBLE).
var quotaKeyIntegral = map[string]bool{
	QuotaProducerByteRate:       true,
	QuotaConsumerByteRate:       true,
	QuotaRequestPercentage:      false,
	QuotaControllerMutationRate: false,
}

// QuotaOp sets (Remove false) or removes one quota value.
type QuotaOp struct {
	Key    string
	Value  float64
	Remove bool
}

// QuotaAlteration is one entry of a request: an entity and its
// operations.
type QuotaAlteration struct {
	Entity []metadata.QuotaEntityData
	Ops    []QuotaOp
}

// AlterClientQuotas changes client quotas: see the comment above. It
// returns the records proposed and one error (nil: accepted) per entry;
// validateOnly proposes nothing.
func (c *Controller) AlterClientQuotas(alts []QuotaAlteration, validateOnly bool) ([]metadata.Record, []error, error) {
	recs, errs := PlanClientQuotas(c.img, alts)
	if validateOnly {
		return nil, errs, nil
	}
	if err := c.propose(recs); err != nil {
		return nil, nil, err
	}
	return recs, errs, nil
}

// PlanClientQuotas decides AlterClientQuotas over img without applying
// anything: the records of the accepted entries and one error per
// entry. Entries are applied in order, so a later entry sees an earlier
// one's values.
func PlanClientQuotas(img *metadata.Image, alts []QuotaAlteration) ([]metadata.Record, []error) {
	var recs []metadata.Record
	errs := make([]error, len(alts))
	cur := img
	for i, a := range alts {
		rs, err := planQuotaEntry(cur, a)
		if err == nil && len(rs) > 0 {
			next, aerr := metadata.Apply(cur, rs...)
			if aerr != nil {
				err = fmt.Errorf("%w: %v", kerr.InvalidRequest, aerr)
			} else {
				cur = next
			}
		}
		if errs[i] = err; err == nil {
			recs = append(recs, rs...)
		}
	}
	return recs, errs
}

func planQuotaEntry(img *metadata.Image, a QuotaAlteration) ([]metadata.Record, error) {
	e, err := validateQuotaEntity(a.Entity)
	if err != nil {
		return nil, err
	}
	have := img.ClientQuotas(e)
	var recs []metadata.Record
	for _, op := range a.Ops {
		if err := validateQuotaValue(op); err != nil {
			return nil, err
		}
		v, ok := have[op.Key]
		switch {
		case op.Remove && !ok, !op.Remove && ok && v == op.Value:
			continue
		}
		recs = append(recs, metadata.ClientQuotaRecord{Entity: e.Data(), Key: op.Key, Value: op.Value, Remove: op.Remove})
	}
	return recs, nil
}

func validateQuotaEntity(data []metadata.QuotaEntityData) (metadata.QuotaEntity, error) {
	if len(data) == 0 {
		return metadata.QuotaEntity{}, fmt.Errorf("%w: invalid empty client quota entity", kerr.InvalidRequest)
	}
	seen := map[string]bool{}
	for _, d := range data {
		switch {
		case seen[d.Type]:
			return metadata.QuotaEntity{}, fmt.Errorf("%w: invalid client quota entity, duplicate entity entry %s", kerr.InvalidRequest, d.Type)
		case d.Type == metadata.QuotaEntityIP:
			return metadata.QuotaEntity{}, fmt.Errorf("%w: ip quota entities (connection_creation_rate) are not supported", kerr.InvalidRequest)
		case d.Type != metadata.QuotaEntityUser && d.Type != metadata.QuotaEntityClientID:
			return metadata.QuotaEntity{}, fmt.Errorf("%w: unhandled client quota entity type: %s", kerr.InvalidRequest, d.Type)
		case d.Name != nil && *d.Name == "":
			return metadata.QuotaEntity{}, fmt.Errorf("%w: empty %s not supported", kerr.InvalidRequest, d.Type)
		}
		seen[d.Type] = true
	}
	e, err := metadata.QuotaEntityOf(data)
	if err != nil {
		return metadata.QuotaEntity{}, fmt.Errorf("%w: %v", kerr.InvalidRequest, err)
	}
	return e, nil
}

func validateQuotaValue(op QuotaOp) error {
	integral, ok := quotaKeyIntegral[op.Key]
	switch {
	case !ok:
		return fmt.Errorf("%w: invalid configuration key %s", kerr.InvalidRequest, op.Key)
	case op.Remove:
		return nil
	case !(op.Value > 0) || math.IsInf(op.Value, 0):
		return fmt.Errorf("%w: quota %s must be greater than 0", kerr.InvalidRequest, op.Key)
	case integral && (math.Abs(math.Mod(op.Value, 1)) > 1e-6 || op.Value > math.MaxInt64):
		return fmt.Errorf("%w: %s cannot be a fractional value", kerr.InvalidRequest, op.Key)
	}
	return nil
}
