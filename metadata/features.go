package metadata

import "fmt"

// Features (KIP-584, KIP-778): the finalized levels a cluster runs at,
// kept in the log as FeatureLevelRecords, and the ranges this software
// supports. Kafka's names and levels
// (server-common's MetadataVersion, KRaftVersion, GroupVersion,
// TransactionVersion).

// The features Varve knows.
const (
	MetadataVersionFeature    = "metadata.version"
	KRaftVersionFeature       = "kraft.version"
	GroupVersionFeature       = "group.version"
	TransactionVersionFeature = "transaction.version"
)

// GroupVersionConsumerProtocol is the group.version level that enables
// KIP-848 consumer groups (Kafka: GroupVersion.GV_1). Below it the
// broker leaves ConsumerGroupHeartbeat and ConsumerGroupDescribe out of
// ApiVersions, so clients fall back to the classic protocol.
const GroupVersionConsumerProtocol int16 = 1

// TransactionVersion2 is the transaction.version level of KIP-890 part
// 2 (Kafka: TransactionVersion.TV_2, whose bootstrap metadata.version is
// 4.0-IV2, so Kafka 4.x finalizes it for a new cluster).
const TransactionVersion2 int16 = 2

// Kafka's metadata.version feature levels for the 4.0 releases, whose
// record versions Varve writes (PartitionRecord v2 with the KIP-966
// fields, RegisterBrokerRecord with log directories). Kafka:
// MetadataVersion.IBP_4_0_IV0 .. IBP_4_0_IV3.
const (
	MetadataVersion4_0IV0 int16 = 22
	MetadataVersion4_0IV1 int16 = 23
	MetadataVersion4_0IV2 int16 = 24
	MetadataVersion4_0IV3 int16 = 25

	// LatestMetadataVersion is the level a new cluster starts at: Kafka
	// 4.0's latest production metadata.version.
	LatestMetadataVersion = MetadataVersion4_0IV3
)

// VersionRange is the range of levels of a feature a node supports,
// both ends included. Kafka: VersionRange / SupportedVersionRange.
type VersionRange struct {
	Min, Max int16
}

// Contains reports whether level is in r.
func (r VersionRange) Contains(level int16) bool { return r.Min <= level && level <= r.Max }

// String is Kafka's VersionRange.toString: "min-max", or one number.
func (r VersionRange) String() string {
	if r.Min == r.Max {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

// supported is what Varve supports of each feature. It claims only what
// exists: metadata.version over the 4.0 levels whose records it writes;
// kraft.version 0 (a static quorum from controller.quorum.voters: the
// dynamic voters of KIP-853 are level 1); group.version 0-1 (1: the
// KIP-848 consumer group protocol, ConsumerGroupHeartbeat and
// ConsumerGroupDescribe); transaction.version 0-2 (1: flexible
// __transaction_state records, 2: KIP-890 part 2's epoch bump at every
// EndTxn).
var supported = map[string]VersionRange{
	MetadataVersionFeature:    {MetadataVersion4_0IV0, LatestMetadataVersion},
	KRaftVersionFeature:       {0, 0},
	GroupVersionFeature:       {0, GroupVersionConsumerProtocol},
	TransactionVersionFeature: {0, TransactionVersion2},
}

// SupportedFeatures returns the features this software supports and
// their ranges: what ApiVersions reports as SupportedFeatures.
func SupportedFeatures() map[string]VersionRange {
	out := make(map[string]VersionRange, len(supported))
	for k, v := range supported {
		out[k] = v
	}
	return out
}

// SupportedFeature is the range of name this software supports; false
// for a feature it does not know.
func SupportedFeature(name string) (VersionRange, bool) {
	r, ok := supported[name]
	return r, ok
}

// metadataChanged marks the metadata.version levels that changed the
// metadata records (Kafka's didMetadataChange), over the levels
// supported: 4.0-IV1 added the eligible leader replicas (KIP-966).
var metadataChanged = map[int16]bool{
	MetadataVersion4_0IV0: false,
	MetadataVersion4_0IV1: true,
	MetadataVersion4_0IV2: false,
	MetadataVersion4_0IV3: false,
}

// MetadataChangedBetween reports whether a level in (to, from] changed
// the metadata records, so that going down from from to to could lose
// metadata. Kafka: MetadataVersion.checkIfMetadataChanged.
func MetadataChangedBetween(from, to int16) bool {
	for l := to + 1; l <= from; l++ {
		if metadataChanged[l] {
			return true
		}
	}
	return false
}

// MetadataVersionName is a metadata.version level's release name, as
// Kafka's tools print it ("4.0-IV3"); the number for a level outside
// those Varve knows.
func MetadataVersionName(level int16) string {
	if level >= MetadataVersion4_0IV0 && level <= MetadataVersion4_0IV3 {
		return fmt.Sprintf("4.0-IV%d", level-MetadataVersion4_0IV0)
	}
	return fmt.Sprint(level)
}

// BootstrapRecords are the records a new cluster's metadata begins
// with: the finalized features (Kafka: BootstrapMetadata, written by
// the first active controller of an empty log): metadata.version,
// group.version 1 as Kafka 4.0 finalizes it by default so that clients
// with group.protocol=consumer work, and transaction.version 2, the
// latest level whose bootstrap metadata.version (4.0-IV2) the latest
// production metadata.version reaches. A level 0 is no record at all,
// as Kafka writes none for a feature left at 0.
func BootstrapRecords() []Record {
	return []Record{FeatureLevelRecord{Name: MetadataVersionFeature, FeatureLevel: LatestMetadataVersion},
		FeatureLevelRecord{Name: GroupVersionFeature, FeatureLevel: GroupVersionConsumerProtocol},
		FeatureLevelRecord{Name: TransactionVersionFeature, FeatureLevel: TransactionVersion2}}
}
