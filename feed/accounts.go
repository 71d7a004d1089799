package feed

import (
	"context"
	"errors"
	"unicode/utf8"

	"feedservice/feed/config"
	"feedservice/feed/text"
	"feedservice/internal/apperr"
	"feedservice/models"
	"feedservice/store"
)

// SignUp creates an account and signs it in.
func (e *Engine) SignUp(ctx context.Context, username, password string, displayName *string) (*models.AuthPayload, error) {
	if err := text.Username(username); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(password); n < config.MinPasswordChars || n > config.MaxPasswordChars {
		return nil, apperr.BadInput("the password must be %d to %d characters long", config.MinPasswordChars, config.MaxPasswordChars)
	}
	name := username
	if displayName != nil {
		var err error
		if name, err = text.DisplayName(*displayName); err != nil {
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
	return e.ChangeProfile(ctx, viewerID, models.ProfileChange{DisplayName: displayName, Bio: bio})
}

// ChangeProfile changes the fields of the viewer's profile that c sets.
// Turning protection off approves every waiting follow request (see
// approveAllRequests); turning it on keeps the followers.
func (e *Engine) ChangeProfile(ctx context.Context, viewerID int64, c models.ProfileChange) (*models.User, error) {
	if c.DisplayName != nil {
		name, err := text.DisplayName(*c.DisplayName)
		if err != nil {
			return nil, err
		}
		c.DisplayName = &name
	}
	if c.Bio != nil {
		if err := text.Bio(*c.Bio); err != nil {
			return nil, err
		}
	}
	u, err := e.store.UpdateProfile(ctx, viewerID, c, e.now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apperr.ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	e.cache.RefreshAfterCommit(ctx, []int64{viewerID}, nil)
	e.stream.Poke()
	if c.IsProtected != nil && !*c.IsProtected {
		if err := e.approveAllRequests(ctx, viewerID); err != nil {
			return nil, err
		}
		return e.store.UserByID(ctx, viewerID)
	}
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
