package quorum

// UpdateFeatures (57), every version kmsg knows (KIP-584, KIP-778):
// finalized feature levels changed by the active controller
// (controller.UpdateFeatures), all or nothing. Version 0 has no upgrade
// type: AllowDowngrade asks for a safe downgrade. Versions 0 and 1
// answer each feature with the request's outcome; version 2 has only
// the top-level error (KIP-1035 dropped the per-feature results).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.UpdateFeatures.Int16(), handle: handleUpdateFeatures,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			return UpdateFeaturesResponse(kreq.(*kmsg.UpdateFeaturesRequest), code, nil)
		}})
}

func handleUpdateFeatures(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.UpdateFeaturesRequest)
	recs, refused, err := c.UpdateFeatures(FeatureUpdates(req), req.ValidateOnly)
	if err != nil {
		return nil, nil, err
	}
	return recs, UpdateFeaturesResponse(req, errorCode(refused), errorMessage(refused)), nil
}

// FeatureUpdates is what req asks for, as the controller takes it.
func FeatureUpdates(req *kmsg.UpdateFeaturesRequest) []controller.FeatureUpdate {
	out := make([]controller.FeatureUpdate, 0, len(req.FeatureUpdates))
	for _, u := range req.FeatureUpdates {
		t := controller.UpgradeType(u.UpgradeType)
		if req.Version == 0 {
			t = controller.Upgrade
			if u.AllowDowngrade {
				t = controller.SafeDowngrade
			}
		}
		out = append(out, controller.FeatureUpdate{Name: u.Feature, Level: u.MaxVersionLevel, Type: t})
	}
	return out
}

// UpdateFeaturesResponse answers req with one outcome for the request
// and, below version 2, for each feature.
func UpdateFeaturesResponse(req *kmsg.UpdateFeaturesRequest, code int16, msg *string) *kmsg.UpdateFeaturesResponse {
	resp := kmsg.NewPtrUpdateFeaturesResponse()
	resp.ErrorCode, resp.ErrorMessage = code, msg
	for _, u := range req.FeatureUpdates {
		r := kmsg.NewUpdateFeaturesResponseResult()
		r.Feature, r.ErrorCode, r.ErrorMessage = u.Feature, code, msg
		resp.Results = append(resp.Results, r)
	}
	return resp
}
