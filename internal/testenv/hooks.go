package testenv

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// AfterEachCommand is a go-redis hook that hands see every command once
// Redis has answered it (or it failed), whether it went alone or in a
// pipeline: for tests that watch, or rewrite, the replies a client gets.
func AfterEachCommand(see func(redis.Cmder)) redis.Hook { return afterEachCommand(see) }

type afterEachCommand func(redis.Cmder)

func (see afterEachCommand) DialHook(next redis.DialHook) redis.DialHook { return next }

func (see afterEachCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		see(cmd)
		return err
	}
}

func (see afterEachCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			see(cmd)
		}
		return err
	}
}

// Hold is a go-redis hook that holds every command that match picks,
// alone or in a pipeline (the whole pipeline waits), until Release: for
// tests that stop one step of the code under test at a chosen command and
// act while it waits. Held is closed when a command is first held.
type Hold struct {
	match     func(redis.Cmder) bool
	held      chan struct{}
	heldOnce  sync.Once
	released  chan struct{}
	closeOnce sync.Once
}

// HoldCommands is a Hold of the commands match picks; the test adds it to a
// client with AddHook and calls Release (deferred too, so that a failing
// test lets the code go).
func HoldCommands(match func(redis.Cmder) bool) *Hold {
	return &Hold{match: match, held: make(chan struct{}), released: make(chan struct{})}
}

// Held is closed once a command has been held.
func (h *Hold) Held() <-chan struct{} { return h.held }

// Release lets the held commands, and all later ones, go; calling it again
// does nothing.
func (h *Hold) Release() { h.closeOnce.Do(func() { close(h.released) }) }

// IsCommand is a HoldCommands match of the commands named name (lower case,
// as go-redis names them) whose first key is key.
func IsCommand(name, key string) func(redis.Cmder) bool {
	return func(c redis.Cmder) bool {
		return c.Name() == name && len(c.Args()) > 1 && c.Args()[1] == key
	}
}

func (h *Hold) wait(ctx context.Context, cmds []redis.Cmder) error {
	for _, c := range cmds {
		if h.match(c) {
			h.heldOnce.Do(func() { close(h.held) })
			select {
			case <-h.released:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		}
	}
	return nil
}

func (h *Hold) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *Hold) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.wait(ctx, []redis.Cmder{cmd}); err != nil {
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *Hold) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.wait(ctx, cmds); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}
