// Package auth hashes passwords and issues and checks the API's bearer tokens (HS256 JWTs). Logged-out
// tokens are refused through the store's revocation list, checked by the caller.
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"
)

// MinKeyLength is the shortest signing key accepted: HS256 with less than 256 bits of key is guessable offline.
const MinKeyLength = 32

// HashPassword returns a bcrypt hash of password.
func HashPassword(password string) (string, error) {
	if len(password) < 8 {
		return "", errors.New("a password needs at least 8 characters")
	}
	if len(password) > 72 {
		return "", errors.New("a password has at most 72 bytes (bcrypt's limit)")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(h), err
}

// CheckPassword says whether password matches hash.
func CheckPassword(hash, password string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// dummyHash is compared against when the user does not exist, so that a login takes as long either way and
// does not tell which user names exist.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("not a password of anyone"), bcrypt.DefaultCost)

// SpendLoginTime does the work of a password check that cannot succeed.
func SpendLoginTime(password string) { _ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password)) }

// Claims are what a token says about its holder.
type Claims struct {
	jwt.RegisteredClaims
	Username string `json:"username"`
	OrgID    string `json:"org,omitempty"`
	Role     string `json:"role"`
	// Epoch is the account's session epoch at issue: a password change moves the account's on, and the token
	// is refused from then on.
	Epoch int64 `json:"sep,omitempty"`
}

// Issuer signs and checks tokens.
type Issuer struct {
	key      []byte
	lifetime time.Duration
}

const issuer = "ssvirt-api"

// NewIssuer takes the signing key (at least MinKeyLength bytes) and the sessions' lifetime.
func NewIssuer(key []byte, lifetime time.Duration) (*Issuer, error) {
	if len(key) < MinKeyLength {
		return nil, fmt.Errorf("the JWT signing key has %d bytes; at least %d are needed", len(key), MinKeyLength)
	}
	if lifetime <= 0 {
		return nil, errors.New("the session lifetime must be positive")
	}
	return &Issuer{key: key, lifetime: lifetime}, nil
}

// Digest is a keyed digest of parts (HMAC-SHA256 under a key derived from the signing key, so that it is neither a
// signature nor testable without the key), the same on every replica. It identifies a request without keeping it.
func (i *Issuer) Digest(parts ...string) string {
	derive := hmac.New(sha256.New, i.key)
	derive.Write([]byte("ssvirt-api request digest"))
	mac := hmac.New(sha256.New, derive.Sum(nil))
	for _, p := range parts {
		// Length-prefixed, so that no two lists of parts run together into the same bytes.
		fmt.Fprintf(mac, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// Issue returns a signed token for the user, in the account's session epoch, and its claims.
func (i *Issuer) Issue(userID, username, orgID, role string, epoch int64) (string, Claims, error) {
	t := time.Now()
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			ID: uuid.NewString(), Subject: userID, Issuer: issuer,
			IssuedAt: jwt.NewNumericDate(t), NotBefore: jwt.NewNumericDate(t),
			ExpiresAt: jwt.NewNumericDate(t.Add(i.lifetime)),
		},
		Username: username, OrgID: orgID, Role: role, Epoch: epoch,
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(i.key)
	return s, c, err
}

// Verify checks a token's signature, algorithm, issuer and times, and returns its claims.
func (i *Issuer) Verify(token string) (Claims, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return i.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithIssuer(issuer), jwt.WithExpirationRequired())
	if err != nil {
		return Claims{}, err
	}
	return c, nil
}
