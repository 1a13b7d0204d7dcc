package quorum

// AlterUserScramCredentials (51), every version kmsg knows (KIP-554):
// SCRAM credentials set and removed through UserScramCredentialRecords
// and RemoveUserScramCredentialRecords, with Kafka's validation
// (controller.AlterUserScramCredentials). Brokers forward it here
// (KIP-590).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.AlterUserSCRAMCredentials.Int16(), handle: handleAlterUserScramCredentials,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
			req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
			seen := map[string]bool{}
			add := func(user string) {
				if !seen[user] {
					seen[user] = true
					r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
					r.User, r.ErrorCode = user, code
					resp.Results = append(resp.Results, r)
				}
			}
			for _, d := range req.Deletions {
				add(d.Name)
			}
			for _, u := range req.Upsertions {
				add(u.Name)
			}
			return resp
		}})
}

func handleAlterUserScramCredentials(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	dels, ups := ScramChanges(req)
	out, err := c.AlterUserScramCredentials(dels, ups)
	if err != nil {
		return nil, nil, err
	}
	return out.Records, ScramResponse(out.Results), nil
}

// ScramChanges are the request's deletions and upsertions as the
// controller package names them.
func ScramChanges(req *kmsg.AlterUserSCRAMCredentialsRequest) ([]controller.ScramDeletion, []controller.ScramUpsertion) {
	dels := make([]controller.ScramDeletion, len(req.Deletions))
	for i, d := range req.Deletions {
		dels[i] = controller.ScramDeletion{Name: d.Name, Mechanism: d.Mechanism}
	}
	ups := make([]controller.ScramUpsertion, len(req.Upsertions))
	for i, u := range req.Upsertions {
		ups[i] = controller.ScramUpsertion{Name: u.Name, Mechanism: u.Mechanism, Iterations: u.Iterations,
			Salt: u.Salt, SaltedPassword: u.SaltedPassword}
	}
	return dels, ups
}

// ScramResponse is the answer carrying each user's result.
func ScramResponse(results []controller.ScramResult) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	for _, r := range results {
		rr := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		rr.User, rr.ErrorCode, rr.ErrorMessage = r.User, errorCode(r.Err), errorMessage(r.Err)
		resp.Results = append(resp.Results, rr)
	}
	return resp
}
