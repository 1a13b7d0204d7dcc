package cluster

// SaslHandshake, versions 0-1.
//
// On a SASL listener, the client names the mechanism it will
// authenticate with in SaslAuthenticate requests (sasl.go has the
// stages). An enabled mechanism starts its exchange; another is answered
// UNSUPPORTED_SASL_MECHANISM with the enabled mechanisms, and the
// connection closes, as Kafka's SaslServerAuthenticator does. On a
// listener without SASL, or once authenticated, the answer is
// ILLEGAL_SASL_STATE (Kafka's KafkaApis), unless the session has a
// lifetime (KIP-368, connections.max.reauth.ms): then the handshake
// starts a re-authentication with the session's mechanism (another
// mechanism is answered ILLEGAL_SASL_STATE and the connection closes).
//
// Skipped: the bare SASL tokens (no request header) that follow a
// version 0 handshake. Version 0 is listed, as Kafka lists it, because
// librdkafka enables SASL only against a broker whose SaslHandshake range
// starts at 0; it then sends version 1 and SaslAuthenticate, as every
// client since Kafka 1.0 does. A version 0 handshake is answered
// UNSUPPORTED_VERSION and the connection closes.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.SASLHandshake.Int16(), min: 0, max: 1, serve: serveSaslHandshake})
}

func serveSaslHandshake(b *Broker, r *vnet.Request, req kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	in := req.(*kmsg.SASLHandshakeRequest)
	resp := in.ResponseKind().(*kmsg.SASLHandshakeResponse)
	ls := b.sec.of(r)
	if ls == nil || ls.sasl == nil {
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp
	}
	resp.SupportedMechanisms = ls.sasl.enabled
	sess := sessionOf(r)
	if r.Version == 0 {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		sess.fail()
		respondAndClose(r, resp, respond)
		return nil
	}
	if !ls.sasl.enabledMechanism(in.Mechanism) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		sess.fail()
		respondAndClose(r, resp, respond)
		return nil
	}
	switch sess.handshake(in.Mechanism, ls.sasl.newExchange(in.Mechanism, b.meta.image)) {
	case handshakeIllegal:
		resp.ErrorCode = kerr.IllegalSaslState.Code
	case handshakeMechanismSwap:
		resp.ErrorCode = kerr.IllegalSaslState.Code
		respondAndClose(r, resp, respond)
		return nil
	}
	return resp
}
