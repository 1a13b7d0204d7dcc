package cluster

// UpdateFeatures, versions 0-2 (KIP-584, KIP-778): finalized feature
// levels, metadata.version among them, changed all or nothing with
// Kafka's validation (controller.PlanFeatureUpdates). In a cluster the
// request is forwarded to the active controller (KIP-590) and answered
// once this broker's image shows the new levels, so that the client's
// next ApiVersions here reports them; a single node decides it over its
// metadata file's image and persists the records before answering.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/quorum"
)

func init() {
	register(&api{key: kmsg.UpdateFeatures.Int16(), min: 0, max: 2, serve: serveUpdateFeatures})
}

func serveUpdateFeatures(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.UpdateFeaturesRequest)
	if b.ctrl == nil {
		return b.updateFeaturesLocally(req)
	}
	// The forward may wait for an election: never on a handler goroutine.
	go func() {
		ctx, cancel := b.controllerContext()
		defer cancel()
		resp := b.forwardUpdateFeatures(ctx, req)
		resp.SetVersion(r.Version)
		respond(bytesResponse(resp.AppendTo(nil)))
	}()
	return nil
}

func (b *Broker) forwardUpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse {
	kresp, err := b.ctrl.Do(ctx, req)
	if err != nil {
		msg := err.Error()
		return quorum.UpdateFeaturesResponse(req, kerr.RequestTimedOut.Code, &msg)
	}
	resp := kresp.(*kmsg.UpdateFeaturesResponse)
	if resp.ErrorCode != 0 || req.ValidateOnly {
		return resp
	}
	_, err = b.awaitImage(ctx, func(img *metadata.Image) bool {
		for _, u := range req.FeatureUpdates {
			if img.FeatureLevel(u.Feature) != u.MaxVersionLevel {
				return false
			}
		}
		return true
	})
	if err != nil {
		msg := err.Error()
		return quorum.UpdateFeaturesResponse(req, errorCode(err), &msg)
	}
	return resp
}

// updateFeaturesLocally decides req on a single node.
func (b *Broker) updateFeaturesLocally(req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse {
	updates := quorum.FeatureUpdates(req)
	var err error
	if req.ValidateOnly {
		_, err = controller.PlanFeatureUpdates(b.meta.image(), updates)
	} else {
		_, err = b.meta.change(func(cur *metadata.Image) ([]metadata.Record, error) {
			return controller.PlanFeatureUpdates(cur, updates)
		})
	}
	if err == nil {
		return quorum.UpdateFeaturesResponse(req, 0, nil)
	}
	msg := err.Error()
	return quorum.UpdateFeaturesResponse(req, errorCode(err), &msg)
}
