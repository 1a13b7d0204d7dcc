package cluster

// SaslAuthenticate, versions 0-2.
//
// Carries the tokens of the mechanism chosen by SaslHandshake (sasl.go
// has the stages): PLAIN's one token, SCRAM's client-first and
// client-final messages, answered with SCRAM's server-first and
// server-final, OAUTHBEARER's initial response (and, after a refused
// token, the client's %x01 answering the error JSON challenge). A failed exchange (unknown user, wrong password, a
// malformed token) is answered SASL_AUTHENTICATION_FAILED, and the
// answer leaves only after connection.failed.authentication.delay.ms,
// then the connection closes (Kafka, KIP-306: brute force is slow). On
// a listener without SASL, before SaslHandshake or once authenticated,
// the answer is ILLEGAL_SASL_STATE.
//
// session_lifetime_ms (v1+) is the session's lifetime once the exchange
// succeeds (KIP-368): connections.max.reauth.ms, or less if the
// credential expires sooner; 0 when the session never ends. A version 0
// client, which cannot re-authenticate, has its connection closed at
// the session's end like any other.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.SASLAuthenticate.Int16(), min: 0, max: 2, serve: serveSaslAuthenticate})
}

func serveSaslAuthenticate(b *Broker, r *vnet.Request, req kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	in := req.(*kmsg.SASLAuthenticateRequest)
	resp := in.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	if ls := b.sec.of(r); ls == nil || ls.sasl == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp
	}
	res := sessionOf(r).step(in.SASLAuthBytes, time.Now(), b.sec.maxReauth)
	switch {
	case !res.ok:
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp
	case res.err != nil:
		b.log.Info("failed authentication", "client", r.Conn.Remote, "mechanism", res.mechanism, "err", res.err)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + res.mechanism
		if af := (*authFailure)(nil); errors.As(res.err, &af) {
			msg = af.msg // OAUTHBEARER's error JSON, as Kafka's SaslAuthenticationException carries it
		}
		resp.ErrorMessage = &msg
		time.AfterFunc(b.sec.failDelay, func() { respondAndClose(r, resp, respond) })
		return nil
	case res.reauth:
		b.sec.reauths.Add(1)
	}
	resp.SASLAuthBytes = res.answer
	if res.done && res.expires {
		resp.SessionLifetimeMillis = max(res.lifetime.Milliseconds(), 0)
	}
	return resp
}
