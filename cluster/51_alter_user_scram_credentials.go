package cluster

// AlterUserScramCredentials, version 0 (KIP-554).
//
// Sets and removes users' SCRAM-SHA-256 and SCRAM-SHA-512 credentials,
// so that kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=
// ...]' --entity-type users works. The client salts the password
// (SaltedPassword = Hi(password, salt, iterations)); the controller's
// rules (controller.AlterUserScramCredentials: iterations 4096..16384,
// known mechanisms, one entry per user, deletions of existing
// credentials) derive the stored and server keys, which are all the
// metadata keeps. In a cluster the request goes to the active
// controller (KIP-590) and the answer leaves once this broker's image
// shows every change that succeeded; a single node applies the records
// to its metadata file, persisted before the new image is published.
// SCRAM authentication looks credentials up in the current image, so a
// change holds for the next authentication.
//
// With an authorizer, Kafka's rule: ALTER on the cluster, else every
// user's result is CLUSTER_AUTHORIZATION_FAILED and nothing changes.

import (
	"bytes"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/quorum"
)

func init() {
	register(&api{key: kmsg.AlterUserSCRAMCredentials.Int16(), min: 0, max: 0, serve: serveAlterUserScramCredentials})
}

func serveAlterUserScramCredentials(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	if err := b.clusterAuthError(r, acl.OpAlter); err != nil {
		return scramFailure(req, err)
	}
	dels, ups := quorum.ScramChanges(req)
	if b.ctrl == nil {
		var out controller.AlterScramResponse
		_, err := b.meta.change(func(cur *metadata.Image) ([]metadata.Record, error) {
			out = controller.PlanScramChanges(cur, dels, ups)
			return out.Records, nil
		})
		if err != nil {
			return scramFailure(req, fmt.Errorf("%w: %v", kerr.KafkaStorageError, err))
		}
		b.logScramChanges(out.Results)
		return quorum.ScramResponse(out.Results)
	}
	// The forward may wait for an election: never on a handler goroutine.
	go func() {
		resp := b.forwardAlterScram(req, ups)
		resp.SetVersion(r.Version)
		respond(bytesResponse(resp.AppendTo(nil)))
	}()
	return nil
}

// forwardAlterScram sends the request to the controller and waits for
// this broker's image to show each accepted change.
func (b *Broker) forwardAlterScram(req *kmsg.AlterUserSCRAMCredentialsRequest, ups []controller.ScramUpsertion) kmsg.Response {
	ctx, cancel := b.controllerContext()
	defer cancel()
	kresp, err := b.ctrl.Do(ctx, req)
	if err != nil {
		return scramFailure(req, fmt.Errorf("%w: %v", kerr.RequestTimedOut, err))
	}
	resp := kresp.(*kmsg.AlterUserSCRAMCredentialsResponse)
	accepted := map[string]bool{}
	for _, rr := range resp.Results {
		accepted[rr.User] = rr.ErrorCode == 0
	}
	_, err = b.awaitImage(ctx, func(img *metadata.Image) bool {
		for _, d := range req.Deletions {
			if _, ok := img.ScramCredential(d.Name, metadata.ScramMechanism(d.Mechanism)); ok && accepted[d.Name] {
				return false
			}
		}
		for _, u := range ups {
			c, ok := img.ScramCredential(u.Name, metadata.ScramMechanism(u.Mechanism))
			if accepted[u.Name] && (!ok || !bytes.Equal(c.Salt, u.Salt) || c.Iterations != u.Iterations) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return scramFailure(req, err)
	}
	for _, rr := range resp.Results {
		if rr.ErrorCode == 0 {
			b.log.Info("SCRAM credentials altered", "user", rr.User)
		}
	}
	return resp
}

func (b *Broker) logScramChanges(results []controller.ScramResult) {
	for _, r := range results {
		if r.Err == nil {
			b.log.Info("SCRAM credentials altered", "user", r.User)
		}
	}
}

// scramFailure answers err for every user of the request.
func scramFailure(req *kmsg.AlterUserSCRAMCredentialsRequest, err error) kmsg.Response {
	var results []controller.ScramResult
	seen := map[string]bool{}
	add := func(user string) {
		if !seen[user] {
			seen[user] = true
			results = append(results, controller.ScramResult{User: user, Err: err})
		}
	}
	for _, d := range req.Deletions {
		add(d.Name)
	}
	for _, u := range req.Upsertions {
		add(u.Name)
	}
	return quorum.ScramResponse(results)
}
