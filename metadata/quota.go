package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Client quotas (KIP-546): the quota values set per user, client id or
// IP address, and their defaults, as Kafka's ClientQuotaControlManager
// keeps them in the metadata. The image keeps each entity's values by
// key; what the values mean (byte rates, a request percentage) and
// which entity a client's request falls under are the broker's.

// Kafka's quota entity types (ClientQuotaEntity.USER, CLIENT_ID, IP).
const (
	QuotaEntityUser     = "user"
	QuotaEntityClientID = "client-id"
	QuotaEntityIP       = "ip"
)

// QuotaEntityData is one part of a ClientQuotaRecord's entity: a type
// and a name, nil for the type's default entity.
type QuotaEntityData struct {
	Type string
	Name *string
}

// ClientQuotaRecord sets (Remove false) or removes one quota value of
// an entity. Kafka: ClientQuotaRecord (api key 14).
type ClientQuotaRecord struct {
	Entity []QuotaEntityData
	Key    string
	Value  float64
	Remove bool
}

func (ClientQuotaRecord) isRecord() {}

// EntityName is one type's part of a quota entity.
type EntityName struct {
	Present bool   // the entity has this type
	Default bool   // the type's default entity (Kafka: a null name)
	Name    string // when present and not the default
}

// QuotaEntity names what quota values apply to: a user, a client id,
// both, or an IP address, each possibly its type's default. It is
// comparable, so that it keys maps.
type QuotaEntity struct {
	User, ClientID, IP EntityName
}

// Named is the entity name of a present, non-default part.
func Named(name string) EntityName { return EntityName{Present: true, Name: name} }

// DefaultEntity is the default entity part of a type.
func DefaultEntity() EntityName { return EntityName{Present: true, Default: true} }

// QuotaEntityOf converts a record's entity, refusing unknown types, a
// type named twice and an empty entity.
func QuotaEntityOf(data []QuotaEntityData) (QuotaEntity, error) {
	var e QuotaEntity
	for _, d := range data {
		var part *EntityName
		switch d.Type {
		case QuotaEntityUser:
			part = &e.User
		case QuotaEntityClientID:
			part = &e.ClientID
		case QuotaEntityIP:
			part = &e.IP
		default:
			return QuotaEntity{}, fmt.Errorf("unknown quota entity type %q", d.Type)
		}
		if part.Present {
			return QuotaEntity{}, fmt.Errorf("quota entity type %q named twice", d.Type)
		}
		*part = EntityName{Present: true, Default: d.Name == nil}
		if d.Name != nil {
			part.Name = *d.Name
		}
	}
	if e == (QuotaEntity{}) {
		return QuotaEntity{}, fmt.Errorf("empty quota entity")
	}
	return e, nil
}

// Data is the entity as a record carries it: user, client-id, ip, the
// parts present in that order.
func (e QuotaEntity) Data() []QuotaEntityData {
	var out []QuotaEntityData
	add := func(typ string, n EntityName) {
		if !n.Present {
			return
		}
		d := QuotaEntityData{Type: typ}
		if !n.Default {
			name := n.Name
			d.Name = &name
		}
		out = append(out, d)
	}
	add(QuotaEntityUser, e.User)
	add(QuotaEntityClientID, e.ClientID)
	add(QuotaEntityIP, e.IP)
	return out
}

// String is the entity as Kafka's tools print it, e.g.
// "user=alice, client-id=<default>".
func (e QuotaEntity) String() string {
	var parts []string
	for _, d := range e.Data() {
		name := "<default>"
		if d.Name != nil {
			name = *d.Name
		}
		parts = append(parts, d.Type+"="+name)
	}
	return strings.Join(parts, ", ")
}

func (n EntityName) compare(o EntityName) int {
	switch {
	case n.Present != o.Present:
		return boolCompare(n.Present, o.Present)
	case n.Default != o.Default:
		return boolCompare(o.Default, n.Default) // defaults first
	}
	return strings.Compare(n.Name, o.Name)
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compareQuotaEntities orders entities by user, then client id, then IP.
func compareQuotaEntities(a, b QuotaEntity) int {
	if c := a.User.compare(b.User); c != 0 {
		return c
	}
	if c := a.ClientID.compare(b.ClientID); c != 0 {
		return c
	}
	return a.IP.compare(b.IP)
}

// ClientQuotas returns e's quota values by key, nil when it has none.
// The map is shared with the image and must not be modified.
func (img *Image) ClientQuotas(e QuotaEntity) map[string]float64 {
	return img.quotas[e]
}

// HasClientQuotas reports whether any entity has quota values.
func (img *Image) HasClientQuotas() bool { return len(img.quotas) > 0 }

// QuotaEntities returns every entity with quota values, ordered by
// user, client id, then IP; in each, an absent part first, then the
// default, then names.
func (img *Image) QuotaEntities() []QuotaEntity {
	return slices.SortedFunc(maps.Keys(img.quotas), compareQuotaEntities)
}

// clientQuota replays a ClientQuotaRecord, as Kafka's
// ClientQuotaControlManager.replay: a value replaces the key's previous
// one, a removal drops it, and an entity left without values is gone.
func (d *delta) clientQuota(r ClientQuotaRecord) error {
	e, err := QuotaEntityOf(r.Entity)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidRecord, err)
	}
	if r.Key == "" {
		return fmt.Errorf("%w: client quota of %s without a key", ErrInvalidRecord, e)
	}
	if !d.quotasOwned {
		d.next.quotas, d.quotasOwned = maps.Clone(d.base.quotas), true
		if d.next.quotas == nil {
			d.next.quotas = map[QuotaEntity]map[string]float64{}
		}
	}
	vals := maps.Clone(d.next.quotas[e])
	if r.Remove {
		delete(vals, r.Key)
	} else {
		if vals == nil {
			vals = map[string]float64{}
		}
		vals[r.Key] = r.Value
	}
	if len(vals) == 0 {
		delete(d.next.quotas, e)
	} else {
		d.next.quotas[e] = vals
	}
	return nil
}

// appendQuotaRecords writes the image's quota values, by entity then
// key (Kafka's ClientQuotasImage.write).
func appendQuotaRecords(recs []Record, img *Image) []Record {
	for _, e := range img.QuotaEntities() {
		vals := img.quotas[e]
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			recs = append(recs, ClientQuotaRecord{Entity: e.Data(), Key: k, Value: vals[k]})
		}
	}
	return recs
}
