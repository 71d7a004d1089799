package sockets

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"feedservice/feed"
	"feedservice/internal/apperr"
	"feedservice/internal/viewer"
)

// A websocket acts for the session its connection_init's token signed in
// (feed.Session) for as long as it lives. A logOut revokes that session:
// every operation sent on the socket afterwards is refused, and the socket
// is closed with 4403, on every instance. Three things see to it:
//
//   - The instance that served the logOut ends its own sockets of the user
//     at once, and every instance ends its own when the log-out's message
//     reaches it (feed.LogOutWatcher); a hub that lost messages checks all
//     of its sockets.
//   - Each operation sent on a socket first checks the session the way an
//     HTTP request checks its token (CheckSession): an instance that
//     missed the message refuses it within LOCAL_CACHE_TTL, as it refuses
//     the token over HTTP, and then closes the socket.
//   - A logOut marks its request's viewer revoked (viewer.Revoke): the
//     fields after it in the same mutation, and the socket's operations,
//     act for no one.

// revocationCheckTimeout bounds the check of the sessions a log-out's
// message names.
const revocationCheckTimeout = 10 * time.Second

// revocationCheckBatch is how many sessions one check reads at once.
const revocationCheckBatch = 1000

// Session is one open websocket's session, with what it takes to end the
// socket.
type Session struct {
	feed.Session // zero until connection_init signed it in
	// conn is the socket (set by Accept); revokeViewer refuses, from its
	// call on, every operation of the socket (viewer.Revoke; set by
	// Sessions.Open).
	conn         *gorillaConn
	revokeViewer func()
	// answering counts the queries and mutations that have not sent their
	// last message yet, so that a socket ends after the answer of the
	// logOut sent on it.
	answering atomic.Int64
	ending    atomic.Bool
}

type socketSessionKey struct{}

// WithSession gives a websocket's request the session that Accept and
// connection_init fill in.
func WithSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			r = r.WithContext(context.WithValue(r.Context(), socketSessionKey{}, &Session{}))
		}
		next.ServeHTTP(w, r)
	})
}

// SessionOf is the websocket session of ctx; nil for HTTP requests.
func SessionOf(ctx context.Context) *Session {
	s, _ := ctx.Value(socketSessionKey{}).(*Session)
	return s
}

// Accepted reports whether Accept took the socket in: false for a
// websocket accepted outside the handler that WithSession wraps.
func (s *Session) Accepted() bool { return s.conn != nil }

// end refuses every operation of the socket from now on, then closes it
// with 4403 once its queries and mutations have answered (at most
// websocketCloseGrace later).
func (s *Session) end() {
	if !s.ending.CompareAndSwap(false, true) {
		return
	}
	s.revokeViewer()
	go func() {
		deadline := time.Now().Add(websocketCloseGrace)
		for s.answering.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		s.conn.closeWith(CloseForbidden, "Forbidden", apperr.ErrRevokedToken)
	}()
}

// Sessions are the sessions of this instance's open websockets, by user:
// at most MaxPerUser each. It is the engine's feed.LogOutWatcher.
type Sessions struct {
	Engine     *feed.Engine // checks the sessions a log-out may have revoked
	Log        *slog.Logger
	MaxPerUser int

	mu     sync.Mutex
	byUser map[int64]map[*Session]struct{}
}

var _ feed.LogOutWatcher = (*Sessions)(nil)

// Open gives s the session its connection_init signed in, and
// revokeViewer, which refuses every operation of the socket from its call
// on; then registers s: false when its user holds MaxPerUser sockets
// already.
func (ss *Sessions) Open(s *Session, session feed.Session, revokeViewer func()) bool {
	s.Session, s.revokeViewer = session, revokeViewer
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byUser == nil {
		ss.byUser = map[int64]map[*Session]struct{}{}
	}
	mine := ss.byUser[s.User]
	if len(mine) >= ss.MaxPerUser {
		return false
	}
	if mine == nil {
		mine = map[*Session]struct{}{}
		ss.byUser[s.User] = mine
	}
	mine[s] = struct{}{}
	return true
}

// Close forgets s, its socket closed.
func (ss *Sessions) Close(s *Session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byUser[s.User], s)
	if len(ss.byUser[s.User]) == 0 {
		delete(ss.byUser, s.User)
	}
}

// of lists the sessions of users, or every session when all.
func (ss *Sessions) of(users []int64, all bool) []*Session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*Session
	add := func(mine map[*Session]struct{}) {
		for s := range mine {
			out = append(out, s)
		}
	}
	if all {
		for _, mine := range ss.byUser {
			add(mine)
		}
		return out
	}
	for _, u := range users {
		add(ss.byUser[u])
	}
	return out
}

// LoggedOut ends the sockets here whose session the log-out of users
// revoked (not a socket opened since with a new token).
func (ss *Sessions) LoggedOut(users []int64) {
	if sessions := ss.of(users, false); len(sessions) > 0 {
		go ss.endRevoked(sessions)
	}
}

// MayHaveLoggedOut checks every socket here: log-out messages may have
// been lost.
func (ss *Sessions) MayHaveLoggedOut() {
	if sessions := ss.of(nil, true); len(sessions) > 0 {
		go ss.endRevoked(sessions)
	}
}

// endRevoked ends those of sessions whose token was revoked. A check that
// fails is logged: each operation on those sockets checks again.
func (ss *Sessions) endRevoked(sessions []*Session) {
	ctx, cancel := context.WithTimeout(context.Background(), revocationCheckTimeout)
	defer cancel()
	for len(sessions) > 0 {
		batch := sessions[:min(len(sessions), revocationCheckBatch)]
		sessions = sessions[len(batch):]
		of := make([]feed.Session, len(batch))
		for i, s := range batch {
			of[i] = s.Session
		}
		revoked, err := ss.Engine.RevokedSessions(ctx, of)
		if err != nil {
			ss.Log.Warn("check the websockets' sessions after a log-out; their next operations check again", "err", err)
			return
		}
		for _, s := range batch {
			for _, r := range revoked {
				if r == s.Session {
					s.end()
				}
			}
		}
	}
}

// CheckSession checks, before each operation sent on a websocket,
// that the socket's session was not revoked since connection_init (as an
// HTTP request checks its token), refusing the operation and ending the
// socket when it was. It also counts the socket's queries and mutations
// until they sent their last message (Session.answering).
type CheckSession struct{ Engine *feed.Engine }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.OperationInterceptor
} = CheckSession{}

func (CheckSession) ExtensionName() string                   { return "CheckSocketSession" }
func (CheckSession) Validate(graphql.ExecutableSchema) error { return nil }

func (c CheckSession) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	s := SessionOf(ctx)
	if s == nil || s.User == 0 {
		return nil
	}
	if err := viewer.TokenError(ctx); err != nil {
		return gqlerror.WrapIfUnwrapped(err)
	}
	err := c.Engine.CheckSession(ctx, s.Session)
	if errors.Is(err, apperr.ErrRevokedToken) {
		s.end()
	}
	if err != nil {
		return gqlerror.WrapIfUnwrapped(err)
	}
	return nil
}

func (CheckSession) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	s := SessionOf(ctx)
	if op := graphql.GetOperationContext(ctx).Operation; s == nil || op == nil || op.Operation == ast.Subscription {
		return next(ctx)
	}
	s.answering.Add(1)
	var once sync.Once
	responses := next(ctx)
	// gqlgen asks again after sending each response; nil is the end.
	return func(ctx context.Context) *graphql.Response {
		r := responses(ctx)
		if r == nil {
			once.Do(func() { s.answering.Add(-1) })
		}
		return r
	}
}
