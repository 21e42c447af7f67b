package auth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/virtual-ingress/virtual-ingress/internal/ssvirt/auth"
)

var key = []byte(strings.Repeat("k", 32))

func TestPasswords(t *testing.T) {
	h, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h, "correct horse") || !strings.HasPrefix(h, "$2") {
		t.Fatalf("not a bcrypt hash: %q", h)
	}
	if !auth.CheckPassword(h, "correct horse") || auth.CheckPassword(h, "correct horsf") {
		t.Fatal("CheckPassword accepts the wrong password or refuses the right one")
	}
	if _, err := auth.HashPassword("short"); err == nil {
		t.Fatal("a 5-character password was accepted")
	}
}

func TestTokens(t *testing.T) {
	if _, err := auth.NewIssuer([]byte("short"), time.Hour); err == nil {
		t.Fatal("a short key was accepted")
	}
	iss, err := auth.NewIssuer(key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tok, claims, err := iss.Issue("u1", "alice", "o1", "vApp User", 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := iss.Verify(tok)
	if err != nil || got.Subject != "u1" || got.OrgID != "o1" || got.ID != claims.ID {
		t.Fatalf("Verify: %+v, %v", got, err)
	}
	// Another key, an expired token, a tampered payload and the "none" algorithm are all refused.
	other, _ := auth.NewIssuer([]byte(strings.Repeat("x", 32)), time.Hour)
	if _, err := other.Verify(tok); err == nil {
		t.Error("a token signed with another key was accepted")
	}
	short, _ := auth.NewIssuer(key, time.Nanosecond)
	old, _, _ := short.Issue("u1", "alice", "o1", "vApp User", 0)
	time.Sleep(1100 * time.Millisecond)
	if _, err := iss.Verify(old); err == nil {
		t.Error("an expired token was accepted")
	}
	parts := strings.Split(tok, ".")
	if _, err := iss.Verify(parts[0] + "." + parts[1] + "x." + parts[2]); err == nil {
		t.Error("a tampered token was accepted")
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := iss.Verify(none); err == nil {
		t.Error("an unsigned token was accepted")
	}
}

func TestDigest(t *testing.T) {
	a, _ := auth.NewIssuer(key, time.Hour)
	b, _ := auth.NewIssuer(key, time.Hour)
	other, _ := auth.NewIssuer([]byte(strings.Repeat("o", auth.MinKeyLength)), time.Hour)
	if a.Digest("item", "", "NAME", "vm") != b.Digest("item", "", "NAME", "vm") {
		t.Error("two replicas with one key digest one request differently")
	}
	for name, d := range map[string]string{
		"another key":        other.Digest("item", "", "NAME", "vm"),
		"another value":      a.Digest("item", "", "NAME", "vm2"),
		"parts run together": a.Digest("item", "NAME", "", "vm"),
		"a part moved":       a.Digest("ite", "m", "NAME", "vm"),
	} {
		if d == a.Digest("item", "", "NAME", "vm") {
			t.Errorf("%s gives the same digest", name)
		}
	}
}
