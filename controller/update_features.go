package controller

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// UpdateFeatures (api key 57) and the bootstrap features, as Kafka's
// FeatureControlManager decides them (KIP-584, KIP-778): a request is
// all or nothing (the first refused update refuses the request and
// writes no record), each update is checked against the levels this
// software supports (metadata.SupportedFeature), an upgrade type must
// match the direction, and a metadata.version downgrade is refused when
// a level in between changed the metadata records (unsafe downgrades
// are refused always, as Kafka 4 refuses them). Not done: checking the
// ranges each broker registered (every node runs this same software,
// and RegisterBrokerRecord's Features are not kept), Kafka 4's feature
// dependencies (every feature but metadata.version supports level 0
// alone here, which depends on nothing).

// UpgradeType is FeatureUpdate's upgrade type. Kafka:
// FeatureUpdate.UpgradeType.
type UpgradeType int8

// Kafka's upgrade types.
const (
	UpgradeUnknown  UpgradeType = 0
	Upgrade         UpgradeType = 1
	SafeDowngrade   UpgradeType = 2
	UnsafeDowngrade UpgradeType = 3
)

// FeatureUpdate asks for one feature's finalized level.
type FeatureUpdate struct {
	Name  string
	Level int16
	Type  UpgradeType
}

// Bootstrap returns the records a new cluster's first active controller
// writes before anything else: the bootstrap features, when the image
// has no metadata.version yet (an empty log, or one written before
// Varve recorded features). Kafka: the active controller writes
// BootstrapMetadata when it activates over an empty log.
func (c *Controller) Bootstrap() ([]metadata.Record, error) {
	if c.img.FeatureLevel(metadata.MetadataVersionFeature) != 0 {
		return nil, nil
	}
	recs := metadata.BootstrapRecords()
	return recs, c.propose(recs)
}

// UpdateFeatures finalizes the levels asked for, in name order: the
// records, and the request's outcome (nil, or INVALID_UPDATE_VERSION
// with Kafka's message). validateOnly checks and writes nothing. The
// last error is a bug, as for every operation.
func (c *Controller) UpdateFeatures(updates []FeatureUpdate, validateOnly bool) ([]metadata.Record, error, error) {
	recs, refused := PlanFeatureUpdates(c.img, updates)
	if refused != nil || validateOnly {
		return nil, refused, nil
	}
	return recs, nil, c.propose(recs)
}

// PlanFeatureUpdates decides updates over img, as UpdateFeatures does:
// the records to write, or the error that refuses the whole request. A
// single node, whose metadata is its own file, decides with it too.
func PlanFeatureUpdates(img *metadata.Image, updates []FeatureUpdate) ([]metadata.Record, error) {
	updates = slices.Clone(updates)
	slices.SortStableFunc(updates, func(a, b FeatureUpdate) int {
		if a.Name < b.Name {
			return -1
		} else if a.Name > b.Name {
			return 1
		}
		return 0
	})
	var recs []metadata.Record
	for i, u := range updates {
		if i > 0 && updates[i-1].Name == u.Name {
			return nil, invalidUpdate(u, "The feature is named twice in the request.")
		}
		if err := checkFeatureUpdate(img, u); err != nil {
			return nil, err
		}
		recs = append(recs, metadata.FeatureLevelRecord{Name: u.Name, FeatureLevel: u.Level})
	}
	return recs, nil
}

// checkFeatureUpdate is Kafka's FeatureControlManager.updateFeature.
func checkFeatureUpdate(img *metadata.Image, u FeatureUpdate) error {
	if u.Type != Upgrade && u.Type != SafeDowngrade && u.Type != UnsafeDowngrade {
		return invalidUpdate(u, "The controller does not support the given upgrade type.")
	}
	if u.Level < 0 {
		return invalidUpdate(u, "A feature version cannot be less than 0.")
	}
	r, known := metadata.SupportedFeature(u.Name)
	switch {
	case !known || (r.Max == 0 && u.Level != 0):
		return invalidUpdate(u, "Local controller does not support this feature.")
	case !r.Contains(u.Level):
		return invalidUpdate(u, "Local controller only supports versions "+r.String())
	}
	cur := img.FeatureLevel(u.Name)
	switch {
	case u.Level < cur && u.Type == Upgrade:
		return invalidUpdate(u, "Can't downgrade the version of this feature without setting the "+
			"upgrade type to either safe or unsafe downgrade.")
	case u.Level > cur && u.Type != Upgrade:
		return invalidUpdate(u, "Can't downgrade to a newer version.")
	}
	if u.Name == metadata.MetadataVersionFeature && u.Level < cur && metadata.MetadataChangedBetween(cur, u.Level) {
		if u.Type == UnsafeDowngrade {
			return invalidMetadataVersion(u.Level, "Unsafe metadata downgrade is not supported in this version.")
		}
		return invalidMetadataVersion(u.Level, "Refusing to perform the requested downgrade because it might delete metadata information.")
	}
	return nil
}

// refusal is a Kafka error with Kafka's own message: Error is the
// message alone (what the response's ErrorMessage carries), and it
// unwraps to the error code.
type refusal struct {
	code *kerr.Error
	msg  string
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.code }

func invalidUpdate(u FeatureUpdate, why string) error {
	return &refusal{kerr.InvalidUpdateVersion, fmt.Sprintf("Invalid update version %d for feature %s. %s", u.Level, u.Name, why)}
}

func invalidMetadataVersion(level int16, why string) error {
	return &refusal{kerr.InvalidUpdateVersion, fmt.Sprintf("Invalid metadata.version %d. %s", level, why)}
}
