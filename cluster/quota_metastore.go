package cluster

import (
	"maps"
	"slices"

	"github.com/varve/varve/metadata"
)

// quotaMeta is one entity's client quota values in a single node's
// metadata file. A part without a name is its type's default entity.
type quotaMeta struct {
	Entity []quotaEntityMeta  `json:"entity"`
	Values map[string]float64 `json:"values"`
}

type quotaEntityMeta struct {
	Type string  `json:"type"`
	Name *string `json:"name,omitempty"` // absent: the default entity
}

// quotaMetas are img's client quotas as the file holds them.
func quotaMetas(img *metadata.Image) []quotaMeta {
	var out []quotaMeta
	for _, e := range img.QuotaEntities() {
		q := quotaMeta{Values: maps.Clone(img.ClientQuotas(e))}
		for _, d := range e.Data() {
			q.Entity = append(q.Entity, quotaEntityMeta{Type: d.Type, Name: d.Name})
		}
		out = append(out, q)
	}
	return out
}

// quotaRecords are the records of the file's client quotas.
func quotaRecords(quotas []quotaMeta) []metadata.Record {
	var recs []metadata.Record
	for _, q := range quotas {
		var ent []metadata.QuotaEntityData
		for _, d := range q.Entity {
			ent = append(ent, metadata.QuotaEntityData{Type: d.Type, Name: d.Name})
		}
		for _, k := range slices.Sorted(maps.Keys(q.Values)) {
			recs = append(recs, metadata.ClientQuotaRecord{Entity: ent, Key: k, Value: q.Values[k]})
		}
	}
	return recs
}
