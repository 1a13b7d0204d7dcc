package cluster

// ApiVersions, versions 0-4.
//
// Every client's first request. The list is generated from the APIs this
// package registers. A version above 4 gets a v0 response carrying
// UNSUPPORTED_VERSION and the list, as Kafka answers, so the client can
// retry with a version both sides know. The response header is always
// v0 (net writes it so).
//
// Features (KIP-584): SupportedFeatures are this software's
// (metadata.SupportedFeatures), FinalizedFeatures the image's, with the
// metadata offset they were read at as their epoch (a single node: its
// metadata file's write count), so that kafka-features describe prints
// them.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/quorum"
)

func init() {
	register(&api{key: kmsg.ApiVersions.Int16(), min: 0, max: 4, serve: serveApiVersions})
}

func serveApiVersions(b *Broker, r *vnet.Request, req kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	resp.ApiKeys = apiKeys()
	if !b.consumerGroupsEnabled() { // Kafka: only with group.version 1 finalized (KIP-848)
		resp.ApiKeys = slices.DeleteFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool {
			return k.ApiKey == kmsg.ConsumerGroupHeartbeat.Int16() || k.ApiKey == kmsg.ConsumerGroupDescribe.Int16()
		})
	}
	quorum.SetApiVersionsFeatures(resp, r.Version, b.meta.image(), b.featuresEpoch())
	return resp
}

// featuresEpoch is the epoch of the image's finalized features.
func (b *Broker) featuresEpoch() int64 {
	if b.quorum != nil {
		return b.quorum.MetadataOffset()
	}
	return b.meta.epoch.Load()
}

// unsupportedApiVersions is the v0 answer to an ApiVersions request whose
// version this broker does not serve.
func unsupportedApiVersions(int16) []byte {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = apiKeys()
	return resp.AppendTo(nil)
}
