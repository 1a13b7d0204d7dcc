package cluster

// DescribeClientQuotas, versions 0-1 (KIP-546).
//
// Lists the client quota entities of the metadata image that match a
// filter, with their values, as Kafka's ClientQuotasImage.describe: each
// component names an entity type and matches an exact name (0), the
// type's default entity (1) or any entity of the type, default included
// (2); an entity matches when it has every component's type with a
// matching name, and, with Strict, no other type. A type twice, an exact
// match without a name, a default or any match with one, or an ip
// component with a user or client-id one is INVALID_REQUEST; an unknown
// type or match type is UNSUPPORTED_VERSION. Entries are ordered by
// user, client id, then IP, each value by key; none is an empty list,
// never null (null is for an error).
//
// With an authorizer, Kafka's rule: DESCRIBE_CONFIGS on the cluster,
// else CLUSTER_AUTHORIZATION_FAILED.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DescribeClientQuotas.Int16(), min: 0, max: 1, serve: serveDescribeClientQuotas})
}

// Kafka's DescribeClientQuotas match types.
const (
	quotaMatchExact     = 0
	quotaMatchDefault   = 1
	quotaMatchSpecified = 2
)

func serveDescribeClientQuotas(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	err := b.clusterAuthError(r, acl.OpDescribeConfigs)
	var f quotaFilter
	if err == nil {
		f, err = newQuotaFilter(req.Components, req.Strict)
	}
	if err != nil {
		resp.ErrorCode = errorCode(err)
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp
	}
	img := b.meta.image()
	// Entries is nullable: null only with an error. Kafka's Java client
	// reads a null list as a failure (a NullPointerException in
	// kafka-configs --describe --entity-type clients), so no match is an
	// empty list.
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, e := range img.QuotaEntities() {
		if f.matches(e) {
			resp.Entries = append(resp.Entries, describeQuotaEntry(e, img.ClientQuotas(e)))
		}
	}
	return resp
}

// quotaFilter is a request's components by entity type: an exact name
// (nil: the default entity) or any.
type quotaFilter struct {
	exact  map[string]*string
	any    map[string]bool
	strict bool
}

func newQuotaFilter(comps []kmsg.DescribeClientQuotasRequestComponent, strict bool) (quotaFilter, error) {
	f := quotaFilter{exact: map[string]*string{}, any: map[string]bool{}, strict: strict}
	for _, c := range comps {
		_, dupExact := f.exact[c.EntityType]
		switch {
		case c.EntityType == "":
			return f, fmt.Errorf("%w: invalid empty entity type", kerr.InvalidRequest)
		case dupExact || f.any[c.EntityType]:
			return f, fmt.Errorf("%w: entity type %s cannot appear more than once in the filter", kerr.InvalidRequest, c.EntityType)
		case c.EntityType != metadata.QuotaEntityUser && c.EntityType != metadata.QuotaEntityClientID && c.EntityType != metadata.QuotaEntityIP:
			return f, fmt.Errorf("%w: unsupported entity type %s", kerr.UnsupportedVersion, c.EntityType)
		}
		switch c.MatchType {
		case quotaMatchExact:
			if c.Match == nil {
				return f, fmt.Errorf("%w: request specified MATCH_TYPE_EXACT, but set match string to null", kerr.InvalidRequest)
			}
			f.exact[c.EntityType] = c.Match
		case quotaMatchDefault, quotaMatchSpecified:
			if c.Match != nil {
				return f, fmt.Errorf("%w: request specified match type %d, but also specified a match string", kerr.InvalidRequest, c.MatchType)
			}
			if c.MatchType == quotaMatchDefault {
				f.exact[c.EntityType] = nil
			} else {
				f.any[c.EntityType] = true
			}
		default:
			return f, fmt.Errorf("%w: unknown match type %d", kerr.UnsupportedVersion, c.MatchType)
		}
	}
	if f.has(metadata.QuotaEntityIP) && (f.has(metadata.QuotaEntityUser) || f.has(metadata.QuotaEntityClientID)) {
		return f, fmt.Errorf("%w: invalid entity filter component combination: an ip filter component cannot be used with a user or client-id one", kerr.InvalidRequest)
	}
	return f, nil
}

func (f quotaFilter) has(typ string) bool {
	_, ok := f.exact[typ]
	return ok || f.any[typ]
}

func (f quotaFilter) matches(e metadata.QuotaEntity) bool {
	data := e.Data()
	if f.strict && len(data) != len(f.exact)+len(f.any) {
		return false
	}
	parts := map[string]*string{}
	for _, d := range data {
		parts[d.Type] = d.Name
	}
	for typ, want := range f.exact {
		got, ok := parts[typ]
		if !ok || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			return false
		}
	}
	for typ := range f.any {
		if _, ok := parts[typ]; !ok {
			return false
		}
	}
	return true
}

func describeQuotaEntry(e metadata.QuotaEntity, vals map[string]float64) kmsg.DescribeClientQuotasResponseEntry {
	out := kmsg.NewDescribeClientQuotasResponseEntry()
	for _, d := range e.Data() {
		ent := kmsg.NewDescribeClientQuotasResponseEntryEntity()
		ent.Type, ent.Name = d.Type, d.Name
		out.Entity = append(out.Entity, ent)
	}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		v := kmsg.NewDescribeClientQuotasResponseEntryValue()
		v.Key, v.Value = k, vals[k]
		out.Values = append(out.Values, v)
	}
	return out
}
