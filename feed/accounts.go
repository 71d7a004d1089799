package feed

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"feedservice/feed/config"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// SignUp creates an account and signs it in.
func (e *Engine) SignUp(ctx context.Context, username, password string, displayName *string) (*models.AuthPayload, error) {
	if err := checkUsername(username); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(password); n < config.MinPasswordChars || n > config.MaxPasswordChars {
		return nil, apperr.BadInput("the password must be %d to %d characters long", config.MinPasswordChars, config.MaxPasswordChars)
	}
	name := username
	if displayName != nil {
		var err error
		if name, err = checkDisplayName(*displayName); err != nil {
			return nil, err
		}
	}
	hash, err := e.passwords.Hash(password)
	if err != nil {
		return nil, err
	}
	now := e.now().UTC()
	u := &models.User{ID: e.ids.Next(), Username: username, DisplayName: name, PasswordHash: hash, CreatedAt: now, LastActiveAt: now}
	if err := e.store.CreateUser(ctx, u); err != nil {
		if errors.Is(err, store.ErrUsernameTaken) {
			return nil, apperr.BadInput("the username %q is taken", username)
		}
		return nil, err
	}
	// The new user's first reads (the viewer, a follow's payload) must find
	// them: no replica may have the row yet, and no cache holds it.
	e.rep.MarkWrote(ctx, []int64{u.ID})
	return e.authPayload(u)
}

// LogIn checks a username and password. A wrong password and an unknown user
// get the same answer, in about the same time.
func (e *Engine) LogIn(ctx context.Context, username, password string) (*models.AuthPayload, error) {
	u, err := e.store.UserByUsername(ctx, username)
	hash := ""
	switch {
	case err == nil:
		hash = u.PasswordHash
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	if !e.passwords.Check(hash, password) {
		return nil, apperr.ErrBadCredentials
	}
	return e.authPayload(u)
}

func (e *Engine) authPayload(u *models.User) (*models.AuthPayload, error) {
	token, err := e.IssueToken(u.ID, u.TokenVersion)
	if err != nil {
		return nil, err
	}
	return &models.AuthPayload{Token: token, User: u}, nil
}

// UpdateProfile changes the viewer's display name and bio.
func (e *Engine) UpdateProfile(ctx context.Context, viewerID int64, displayName, bio *string) (*models.User, error) {
	if displayName != nil {
		name, err := checkDisplayName(*displayName)
		if err != nil {
			return nil, err
		}
		displayName = &name
	}
	if bio != nil {
		if n := utf8.RuneCountInString(*bio); n > config.MaxBioChars || !utf8.ValidString(*bio) {
			return nil, apperr.BadInput("the bio must be valid text of at most %d characters", config.MaxBioChars)
		}
		if err := refuseControls("the bio", *bio); err != nil {
			return nil, err
		}
	}
	u, err := e.store.UpdateProfile(ctx, viewerID, displayName, bio, e.now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, nil)
	e.stream.Poke()
	return u, nil
}

// UserByUsername finds a user by name, ignoring case; nil when there is none.
func (e *Engine) UserByUsername(ctx context.Context, username string) (*models.User, error) {
	u, err := e.store.UserByUsername(ctx, username)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return u, err
}

// Users loads users by id, in the order of ids; nil where unknown, from
// the cache tiers. The users are shared with other readers: read them only.
func (e *Engine) Users(ctx context.Context, ids []int64) ([]*models.User, error) {
	return e.cache.Users(ctx, ids)
}

func checkUsername(username string) error {
	if n := len(username); n < config.MinUsernameChars || n > config.MaxUsernameChars || !usernamePattern.MatchString(username) {
		return apperr.BadInput("a username is %d to %d letters, digits or underscores", config.MinUsernameChars, config.MaxUsernameChars)
	}
	return nil
}

// checkDisplayName returns name trimmed of surrounding white space, if
// what remains may name a user: 1 to MaxDisplayNameChars code points of
// valid UTF-8, on one line (no control characters at all, line feed and
// tab included, unlike a post or a bio), without bidirectional
// formatting characters.
func checkDisplayName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n == 0 || n > config.MaxDisplayNameChars || !utf8.ValidString(name) {
		return "", apperr.BadInput("a display name is 1 to %d characters", config.MaxDisplayNameChars)
	}
	n := 0
	for _, r := range name {
		n++
		switch {
		case unicode.IsControl(r):
			return "", apperr.BadInput("the display name holds the control character %U at character %d: a display name is one line of text, without line feeds, tabs or other control characters", r, n)
		case bidiControl(r):
			return "", apperr.BadInput("the display name holds the bidirectional formatting character %U at character %d: a display name may not reorder the text around it (U+061C, U+200E, U+200F, U+202A to U+202E and U+2066 to U+2069 are refused)", r, n)
		}
	}
	return name, nil
}

// bidiControl says whether r is one of Unicode's bidirectional formatting
// characters: the embeddings and overrides U+202A to U+202E, the isolates
// U+2066 to U+2069, and the marks U+200E, U+200F and U+061C. In a name
// shown beside other text they can reverse what follows it (a name ending
// in U+202E turns "posted 2 hours ago" around), so names refuse them.
// Post bodies and bios keep them: right-to-left text needs the marks, and
// a reader sees such a text as a block of its own.
func bidiControl(r rune) bool {
	switch {
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return r == '\u200e' || r == '\u200f' || r == '\u061c'
}
