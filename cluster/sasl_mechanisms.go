package cluster

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/xdg-go/scram"

	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
)

// The JAAS login modules Kafka names for each mechanism.
const (
	plainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// scramIterations is the iteration count of credentials made from a JAAS
// password: Kafka's minimum for SCRAM-SHA-256 and -512
// (ScramMechanism.minIterations), and kafka-configs' default.
const scramIterations = 4096

// errAuthFailed is any failed authentication: the client learns nothing
// more (Kafka answers every mechanism's failure with one message).
var errAuthFailed = errors.New("invalid credentials")

// saslConfig is one listener's SASL mechanisms and their users. Built at
// start-up, read-only afterwards.
type saslConfig struct {
	enabled []string               // sasl.enabled.mechanisms, in the configured order
	plain   map[string]plainSecret // user -> salted hash of the password
	scram   map[string]*scramMechanism
	oauth   tokenValidator // OAUTHBEARER's; nil when not enabled
}

// scramMechanism is one SCRAM mechanism: its hash and the users of its
// JAAS configuration. Users whose credentials are in the cluster
// metadata (AlterUserScramCredentials) are looked up in the image at
// each authentication, and win over a JAAS user of the same name.
type scramMechanism struct {
	mech  metadata.ScramMechanism
	hash  scram.HashGeneratorFcn
	creds map[string]scram.StoredCredentials // from the JAAS property
}

// newSaslConfig reads a listener's enabled mechanisms and each one's JAAS
// configuration (listener.name.<l>.<mechanism>.sasl.jaas.config).
func newSaslConfig(s config.ListenerSecurity) (*saslConfig, error) {
	c := &saslConfig{enabled: s.SaslEnabledMechanisms, plain: map[string]plainSecret{}, scram: map[string]*scramMechanism{}}
	if len(c.enabled) == 0 {
		return nil, errors.New("sasl.enabled.mechanisms is empty")
	}
	for _, mech := range c.enabled {
		var err error
		switch mech {
		case "PLAIN":
			err = c.loadPlain(s.JAAS[mech])
		case "SCRAM-SHA-256", "SCRAM-SHA-512":
			err = c.loadScram(mech, s.JAAS[mech])
		case "OAUTHBEARER":
			c.oauth, err = newTokenValidator(s, time.Now())
		default:
			err = fmt.Errorf("SASL mechanism %s is enabled (sasl.enabled.mechanisms), which Varve does not implement: enable PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", mech)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// jaasUsersOf parses mech's JAAS configuration and returns its users.
func jaasUsersOf(mech, jaas, module string) (map[string]string, error) {
	prop := "listener.name.<listener>." + strings.ToLower(mech) + ".sasl.jaas.config"
	if jaas == "" {
		return nil, fmt.Errorf("SASL mechanism %s has no users: set %s", mech, prop)
	}
	e, err := parseJAAS(jaas)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prop, err)
	}
	if e.module != module {
		return nil, fmt.Errorf("%s: login module %s, expected %s", prop, e.module, module)
	}
	return e.users(), nil
}

func (c *saslConfig) loadPlain(jaas string) error {
	users, err := jaasUsersOf("PLAIN", jaas, plainLoginModule)
	if err != nil {
		return err
	}
	for u, pw := range users {
		c.plain[u] = newPlainSecret(pw)
	}
	return nil
}

// loadScram makes each JAAS user's SCRAM credentials (a random salt,
// scramIterations, the stored and server keys); the password itself is
// not kept. Without a JAAS configuration the mechanism's users are
// those of the cluster metadata only, as Kafka's.
func (c *saslConfig) loadScram(mech, jaas string) error {
	hash := scram.SHA256
	if mech == "SCRAM-SHA-512" {
		hash = scram.SHA512
	}
	m := &scramMechanism{mech: metadata.ScramMechanismNamed(mech), hash: hash, creds: map[string]scram.StoredCredentials{}}
	c.scram[mech] = m
	if jaas == "" {
		return nil
	}
	users, err := jaasUsersOf(mech, jaas, scramLoginModule)
	if err != nil {
		return err
	}
	for u, pw := range users {
		client, err := hash.NewClient(u, pw, "")
		if err != nil {
			return fmt.Errorf("%s user %s: the password is not valid SASLprep text", mech, u)
		}
		salt := make([]byte, 16)
		rand.Read(salt)
		m.creds[u] = client.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
	}
	return nil
}

// lookup returns user's credentials: the metadata's, else the JAAS
// configuration's.
func (m *scramMechanism) lookup(img *metadata.Image, user string) (scram.StoredCredentials, bool) {
	if img != nil {
		if c, ok := img.ScramCredential(user, m.mech); ok {
			return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: int(c.Iterations)},
				StoredKey: c.StoredKey, ServerKey: c.ServerKey}, true
		}
	}
	c, ok := m.creds[user]
	return c, ok
}

// saslExchange is one mechanism's server side of an authentication.
type saslExchange interface {
	// step takes the client's next token and returns the server's answer;
	// done with the authenticated user once the exchange succeeded.
	step(token []byte) (answer []byte, user string, done bool, err error)
}

// newExchange starts an exchange of mech, which is enabled; image is
// the node's current metadata image, where SCRAM credentials are
// looked up.
func (c *saslConfig) newExchange(mech string, image func() *metadata.Image) saslExchange {
	switch mech {
	case "PLAIN":
		return &plainExchange{users: c.plain}
	case "OAUTHBEARER":
		return &oauthExchange{validator: c.oauth, now: time.Now}
	}
	ex := &scramExchange{hash: c.scram[mech].hash}
	srv, _ := ex.hash.NewServer(func(user string) (scram.StoredCredentials, error) {
		var img *metadata.Image
		if image != nil {
			img = image()
		}
		cred, ok := c.scram[mech].lookup(img, user)
		if !ok {
			return scram.StoredCredentials{}, errAuthFailed
		}
		ex.cred = cred
		return cred, nil
	}) // never fails
	ex.conv = srv.NewConversation()
	return ex
}

// plainSecret is a PLAIN password, salted and hashed so that the node
// does not hold it in clear after start-up.
type plainSecret struct{ salt, sum []byte }

func newPlainSecret(pw string) plainSecret {
	s := plainSecret{salt: make([]byte, 16)}
	rand.Read(s.salt)
	s.sum = s.hash(pw)
	return s
}

func (s plainSecret) hash(pw string) []byte {
	h := sha256.New()
	h.Write(s.salt)
	h.Write([]byte(pw))
	return h.Sum(nil)
}

func (s plainSecret) matches(pw string) bool {
	return subtle.ConstantTimeCompare(s.hash(pw), s.sum) == 1
}

// plainExchange is RFC 4616 as Kafka's PlainSaslServer reads it: one
// token authzid NUL authcid NUL password; an authorization id other
// than the user is refused.
type plainExchange struct {
	users map[string]plainSecret
	used  bool
}

func (p *plainExchange) step(token []byte) ([]byte, string, bool, error) {
	if p.used {
		return nil, "", false, errors.New("PLAIN takes one token")
	}
	p.used = true
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 {
		return nil, "", false, fmt.Errorf("invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts))
	}
	authz, user, pw := string(parts[0]), string(parts[1]), string(parts[2])
	if user == "" || pw == "" {
		return nil, "", false, errAuthFailed
	}
	if authz != "" && authz != user {
		return nil, "", false, errors.New("client requested an authorization id that is different from username")
	}
	sec, ok := p.users[user]
	if !ok {
		sec = newPlainSecret("") // as much work for an unknown user as for a known one
	}
	if !sec.matches(pw) || !ok {
		return nil, "", false, errAuthFailed
	}
	return nil, user, true, nil
}

// scramExchange is RFC 5802's server side, as Kafka's ScramSaslServer
// runs it: github.com/xdg-go/scram reads the client-first message and
// writes the server-first; the client-final is checked here, because
// Kafka accepts a client nonce that only ends with the server's nonce
// (librdkafka sends its own nonce before the combined one) where
// xdg-go/scram wants them equal.
type scramExchange struct {
	hash      scram.HashGeneratorFcn
	conv      *scram.ServerConversation
	cred      scram.StoredCredentials // the user's, as looked up for the client-first message
	gs2       string                  // the client-first message's GS2 header, echoed base64 in the client-final
	firstBare string                  // the client-first message without its GS2 header
	first     string                  // the server-first message
	nonce     string                  // the combined nonce of the server-first message
	done      bool
}

func (s *scramExchange) step(token []byte) ([]byte, string, bool, error) {
	if s.first == "" {
		return s.stepFirst(string(token))
	}
	if s.done {
		return nil, "", false, errors.New("SCRAM exchange already complete")
	}
	s.done = true
	return s.stepFinal(string(token))
}

func (s *scramExchange) stepFirst(c1 string) ([]byte, string, bool, error) {
	answer, err := s.conv.Step(c1)
	if err != nil {
		return nil, "", false, errAuthFailed
	}
	if authz := s.conv.AuthzID(); authz != "" && authz != s.conv.Username() {
		return nil, "", false, errors.New("client requested an authorization id that is different from username")
	}
	// c1 is gs2-header "n," [authzid] "," client-first-bare; the header
	// was checked by xdg-go/scram.
	i := strings.Index(c1, ",")
	j := strings.Index(c1[i+1:], ",")
	s.gs2, s.firstBare, s.first = c1[:i+1+j+1], c1[i+1+j+1:], answer
	s.nonce, _ = strings.CutPrefix(strings.SplitN(answer, ",", 2)[0], "r=")
	return []byte(answer), "", false, nil
}

// stepFinal checks c=<base64 GS2 header>,r=<nonce>[,extensions],p=<proof>
// and answers v=<server signature>.
func (s *scramExchange) stepFinal(c2 string) ([]byte, string, bool, error) {
	withoutProof, proofB64, ok := strings.Cut(c2, ",p=")
	fields := strings.Split(withoutProof, ",")
	if !ok || len(fields) < 2 || fields[0] != "c="+base64.StdEncoding.EncodeToString([]byte(s.gs2)) || !strings.HasPrefix(fields[1], "r=") ||
		!strings.HasSuffix(fields[1], s.nonce) {
		return nil, "", false, errors.New("invalid client-final message or nonce")
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	cred, h := s.cred, s.hash
	if err != nil || len(proof) != h().Size() {
		return nil, "", false, errAuthFailed
	}
	authMessage := []byte(s.firstBare + "," + s.first + "," + withoutProof)
	clientKey := hmacOf(h, cred.StoredKey, authMessage)
	for i := range clientKey {
		clientKey[i] ^= proof[i]
	}
	stored := h()
	stored.Write(clientKey)
	if !hmac.Equal(stored.Sum(nil), cred.StoredKey) {
		return nil, "", false, errAuthFailed
	}
	sig := hmacOf(h, cred.ServerKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(sig)), s.conv.Username(), true, nil
}

func hmacOf(h scram.HashGeneratorFcn, key, data []byte) []byte {
	m := hmac.New(h, key)
	m.Write(data)
	return m.Sum(nil)
}

// enabledMechanism reports whether mech is enabled on the listener.
func (c *saslConfig) enabledMechanism(mech string) bool { return slices.Contains(c.enabled, mech) }
