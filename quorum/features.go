package quorum

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/metadata"
)

// SetApiVersionsFeatures fills resp's SupportedFeatures (this
// software's, metadata.SupportedFeatures) and FinalizedFeatures (img's,
// with epoch, the metadata offset they were read at), as Kafka's nodes
// answer ApiVersions so that kafka-features describe can print them.
// Below version 4, a feature whose supported range starts at 0 is left
// out: older clients refuse a minimum of 0 (Kafka: KAFKA-17011,
// ApiVersionsResponse's alterFeatureLevel0).
func SetApiVersionsFeatures(resp *kmsg.ApiVersionsResponse, version int16, img *metadata.Image, epoch int64) {
	sup := metadata.SupportedFeatures()
	for _, name := range slices.Sorted(maps.Keys(sup)) {
		r := sup[name]
		if version < 4 && r.Min == 0 {
			continue
		}
		f := kmsg.NewApiVersionsResponseSupportedFeature()
		f.Name, f.MinVersion, f.MaxVersion = name, r.Min, r.Max
		resp.SupportedFeatures = append(resp.SupportedFeatures, f)
	}
	resp.FinalizedFeaturesEpoch = -1
	if img == nil || len(img.Features()) == 0 {
		return
	}
	resp.FinalizedFeaturesEpoch = epoch
	for _, name := range img.Features() {
		f := kmsg.NewApiVersionsResponseFinalizedFeature()
		l := img.FeatureLevel(name)
		f.Name, f.MinVersionLevel, f.MaxVersionLevel = name, l, l
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, f)
	}
}
