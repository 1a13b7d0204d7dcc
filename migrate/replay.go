package migrate

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/varve/varve/metadata"
)

// Kafka's api keys of the metadata records that package metadata does
// not model (Kafka: MetadataRecordType).
const (
	keyUnregisterBroker      = 1
	keyDelegationToken       = 10
	keyNoOp                  = 20
	keyZkMigrationState      = 21
	keyBeginTransaction      = 23
	keyEndTransaction        = 24
	keyAbortTransaction      = 25
	keyRemoveDelegationToken = 26
	keyRegisterController    = 27
	keyClearElr              = 28
	keyUnregisterController  = 29
)

// ignored are the records a single Varve node has no use for: they
// describe Kafka's controllers and its brokers' registrations, mark
// time, or clear a replica set Varve does not keep (KIP-966's eligible
// leader replicas). Nothing a client sees depends on them.
var ignored = map[uint64]string{
	keyUnregisterBroker:     "UnregisterBrokerRecord",
	keyNoOp:                 "NoOpRecord",
	keyZkMigrationState:     "ZkMigrationStateRecord",
	keyRegisterController:   "RegisterControllerRecord",
	keyClearElr:             "ClearElrRecord",
	keyUnregisterController: "UnregisterControllerRecord",
}

// refused are records whose state Varve cannot carry over: the state
// would be silently lost.
var refused = map[uint64]string{
	keyDelegationToken:       "DelegationTokenRecord (delegation tokens)",
	keyRemoveDelegationToken: "RemoveDelegationTokenRecord (delegation tokens)",
}

// replayer replays Kafka's metadata records into an image, as Kafka's
// MetadataLoader does: batch by batch, a metadata transaction (KIP-868)
// applied whole at its end or dropped at its abort. Feature levels and
// broker configs are kept aside: Varve finalizes its own features, and
// its broker configs come from server.properties.
type replayer struct {
	img      *metadata.Image
	pending  []metadata.Record // records not yet applied
	inTxn    bool              // within Begin/EndTransactionRecord
	features map[string]int16
	brokers  map[string]map[string]string // broker configs by resource name ("" the cluster default)
	ignored  map[string]int
	refusals []string
}

func newReplayer(clusterID string) *replayer {
	return &replayer{img: metadata.New(clusterID), features: map[string]int16{},
		brokers: map[string]map[string]string{}, ignored: map[string]int{}}
}

// batch replays one batch of the log or snapshot. After the first
// refusal the rest of the log is not replayed (the image would not be
// Kafka's), and batch does nothing.
func (r *replayer) batch(e entry) {
	for i, v := range e.values {
		if len(r.refusals) > 0 {
			return
		}
		r.value(e.offset+int64(i), v)
	}
	if !r.inTxn {
		r.flush(e.offset)
	}
}

// value replays one record's bytes, at offset of the log.
func (r *replayer) value(offset int64, v []byte) {
	rec, err := metadata.DecodeRecord(v)
	if errors.Is(err, metadata.ErrUnsupportedRecord) {
		r.unmodelled(offset, v)
		return
	}
	if err != nil {
		r.refuse("offset %d: %v", offset, err)
		return
	}
	switch rec := rec.(type) {
	case metadata.BeginTransactionRecord:
		r.inTxn = true
	case metadata.EndTransactionRecord:
		r.inTxn = false
		r.flush(offset)
	case metadata.AbortTransactionRecord:
		r.inTxn, r.pending = false, nil
	case metadata.NoOpRecord:
		r.ignored[ignored[keyNoOp]]++
	case metadata.FeatureLevelRecord:
		r.features[rec.Name] = rec.FeatureLevel
	case metadata.ConfigRecord:
		r.config(offset, rec)
	default:
		r.pending = append(r.pending, rec)
	}
}

// unmodelled handles a record package metadata does not decode.
func (r *replayer) unmodelled(offset int64, v []byte) {
	key, version := recordKey(v)
	switch {
	case key == keyBeginTransaction:
		r.inTxn = true
	case key == keyEndTransaction:
		r.inTxn = false
		r.flush(offset)
	case key == keyAbortTransaction:
		r.inTxn, r.pending = false, nil
	case ignored[key] != "":
		r.ignored[ignored[key]]++
	case refused[key] != "":
		r.refuse("offset %d: %s: Varve cannot carry this state over", offset, refused[key])
	default:
		r.refuse("offset %d: a metadata record of api key %d version %d that Varve does not know", offset, key, version)
	}
}

// config keeps a broker config aside and queues a topic's; other
// resources (client metrics, groups) are refused.
func (r *replayer) config(offset int64, rec metadata.ConfigRecord) {
	switch rec.ResourceType {
	case metadata.ConfigResourceTopic:
		r.pending = append(r.pending, rec)
	case metadata.ConfigResourceBroker:
		c := r.brokers[rec.ResourceName]
		if c == nil {
			c = map[string]string{}
			r.brokers[rec.ResourceName] = c
		}
		if rec.Value == nil {
			delete(c, rec.Name)
		} else {
			c[rec.Name] = *rec.Value
		}
	default:
		r.refuse("offset %d: config %s of resource type %d %q: Varve cannot carry it over", offset, rec.Name, rec.ResourceType, rec.ResourceName)
	}
}

// flush applies the pending records as one change.
func (r *replayer) flush(offset int64) {
	if len(r.pending) == 0 || len(r.refusals) > 0 {
		return
	}
	next, err := metadata.Apply(r.img, r.pending...)
	if err != nil {
		r.refuse("offset %d: replaying Kafka's records: %v", offset, err)
		return
	}
	r.img, r.pending = next, nil
}

func (r *replayer) refuse(format string, args ...any) {
	r.refusals = append(r.refusals, fmt.Sprintf(format, args...))
}

// recordKey reads a record's api key and version (the frame's second
// and third uvarints).
func recordKey(v []byte) (key, version uint64) {
	key, version, _ = metadata.RecordHeader(v)
	return key, version
}

// FeatureChange is a feature Kafka had finalized and the level the
// Varve node runs it at: Varve's highest supported level at or below
// Kafka's, or 0 (Varve dropped it) for a feature Varve does not know.
type FeatureChange struct {
	Name         string
	Kafka, Varve int16
	Known        bool
}

// finalizeFeatures applies Varve's levels of Kafka's features to the
// image, metadata.version first, and says what changed.
func (r *replayer) finalizeFeatures() []FeatureChange {
	if _, ok := r.features[metadata.MetadataVersionFeature]; !ok {
		r.features[metadata.MetadataVersionFeature] = metadata.LatestMetadataVersion
	}
	var recs []metadata.Record
	var out []FeatureChange
	names := slices.Sorted(maps.Keys(r.features))
	slices.SortStableFunc(names, func(a, b string) int {
		return boolInt(b == metadata.MetadataVersionFeature) - boolInt(a == metadata.MetadataVersionFeature)
	})
	for _, name := range names {
		c := FeatureChange{Name: name, Kafka: r.features[name]}
		vr, ok := metadata.SupportedFeature(name)
		if ok {
			c.Known, c.Varve = true, max(min(c.Kafka, vr.Max), vr.Min)
			if c.Varve > 0 {
				recs = append(recs, metadata.FeatureLevelRecord{Name: name, FeatureLevel: c.Varve})
			}
		}
		out = append(out, c)
	}
	next, err := metadata.Apply(r.img, recs...)
	if err != nil {
		r.refuse("features: %v", err)
		return out
	}
	r.img = next
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
