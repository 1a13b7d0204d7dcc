package config

import (
	"errors"
	"testing"
)

// Kafka: ssl.principal.mapping.rules (KIP-371), the examples of Kafka's
// documentation ("Customizing SSL User Name") and of its
// SslPrincipalMapper tests.
func TestPrincipalRulesMap(t *testing.T) {
	docs := `RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,
RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,
RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,
DEFAULT`
	mapper := "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, " +
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, DEFAULT"
	for _, c := range []struct{ rules, dn, want string }{
		{docs, "CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "serviceuser"},
		{docs, "CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "adminuser@admin"},
		{mapper, "CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke"},
		{mapper, "CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"},
		{mapper, "cn=duke,ou=sme,dc=mycp,dc=com", "DUKE@SME"},
		{mapper, "cN=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE"},
		{mapper, "OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"},
		{"DEFAULT", "CN=a,O=b", "CN=a,O=b"},
		// A comma escaped in the DN (RFC 2253) is kept, white space after
		// the separating comma ignored.
		{`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`, `CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`, `Tkac\, Adam`},
		// An escaped slash in the pattern; a dollar sign and a reference
		// to no group in the replacement are literal text.
		{`RULE:^CN=(.*)\/(.*)$/$2 \$ $1 $9/`, "CN=a/b", "b $ a $9"},
		// $12 with one group is group 1 then "2", as Java reads it.
		{`RULE:^CN=(.*)$/$12/`, "CN=x", "x2"},
		// The first matching rule wins, even after a rule that did not.
		{`RULE:^O=(.*)$/$1/,RULE:^CN=(.*)$/$1/U,RULE:^CN=(.*)$/$1/`, "CN=first", "FIRST"},
	} {
		p, err := ParsePrincipalRules(c.rules)
		if err != nil {
			t.Fatalf("%q: %v", c.rules, err)
		}
		got, err := p.Map(c.dn)
		if err != nil || got != c.want {
			t.Errorf("%q on %q: %q %v, want %q", c.rules, c.dn, got, err, c.want)
		}
	}
}

// Kafka: with no matching rule (and no DEFAULT) the client is not
// authenticated.
func TestPrincipalRulesNoMatch(t *testing.T) {
	p, err := ParsePrincipalRules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Map("CN=Duke,OU=XXX,O=Org,C=US"); !errors.Is(err, ErrNoPrincipalRule) {
		t.Fatalf("got %q %v, want ErrNoPrincipalRule", got, err)
	}
}

// Kafka's SslPrincipalMapperTest valid and invalid rule lists.
func TestPrincipalRulesSyntax(t *testing.T) {
	for _, ok := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/U",
		"RULE:^CN=([a-zA-Z.]*),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=([a-zA-Z.]*),OU=ServiceUsers.*$/$1/L",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,  DEFAULT ,",
	} {
		if _, err := ParsePrincipalRules(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"default", "DEFAUL", "DEFAULT/L", "DEFAULT/U", "",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
		"RULE:^CN=(.*?$/$1/",   // not a regular expression
		"RULE:^CN=(.*)$/$x/",   // '$' naming no group
		"RULE:^CN=(.*)$/${n}/", // no group of that name
	} {
		if _, err := ParsePrincipalRules(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
