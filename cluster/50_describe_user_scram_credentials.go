package cluster

// DescribeUserScramCredentials, version 0 (KIP-554).
//
// Lists users' SCRAM mechanisms and iteration counts from this node's
// metadata image (never a salt or a key), as Kafka's brokers answer from
// their metadata cache: every user with a credential when the request
// names none (null or empty), else the named users, each named once.
// Errors per user, Kafka's: RESOURCE_NOT_FOUND for a user without a
// credential, DUPLICATE_RESOURCE for a user named twice.
//
// With an authorizer, Kafka's rule: DESCRIBE on the cluster, else the
// whole answer is CLUSTER_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DescribeUserSCRAMCredentials.Int16(), min: 0, max: 0, serve: serveDescribeUserScramCredentials})
}

func serveDescribeUserScramCredentials(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if err := b.clusterAuthError(r, acl.OpDescribe); err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	img := b.meta.image()
	byUser := map[string][]kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo{}
	var users []string // in the image's order: by user, then mechanism
	for _, k := range img.ScramKeys() {
		c, _ := img.ScramCredential(k.User, k.Mechanism)
		if byUser[k.User] == nil {
			users = append(users, k.User)
		}
		ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
		ci.Mechanism, ci.Iterations = int8(k.Mechanism), c.Iterations
		byUser[k.User] = append(byUser[k.User], ci)
	}
	if len(req.Users) > 0 {
		users = describedUsers(req.Users)
	}
	for _, u := range users {
		resp.Results = append(resp.Results, describeScramUser(u, byUser[u], len(req.Users) > 0 && countUser(req.Users, u) > 1))
	}
	return resp
}

// describedUsers are the request's users, each once, in request order.
func describedUsers(req []kmsg.DescribeUserSCRAMCredentialsRequestUser) []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range req {
		if !seen[u.Name] {
			seen[u.Name] = true
			out = append(out, u.Name)
		}
	}
	return out
}

func countUser(req []kmsg.DescribeUserSCRAMCredentialsRequestUser, name string) int {
	n := 0
	for _, u := range req {
		if u.Name == name {
			n++
		}
	}
	return n
}

func describeScramUser(user string, creds []kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo, dup bool) kmsg.DescribeUserSCRAMCredentialsResponseResult {
	r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
	r.User = user
	var msg string
	switch {
	case dup:
		r.ErrorCode, msg = kerr.DuplicateResource.Code, "Cannot describe SCRAM credentials for the same user twice in a single request: "+user
	case len(creds) == 0:
		r.ErrorCode, msg = kerr.ResourceNotFound.Code, "Attempt to describe a user credential that does not exist: "+user
	default:
		r.CredentialInfos = creds
		return r
	}
	r.ErrorMessage = &msg
	return r
}
