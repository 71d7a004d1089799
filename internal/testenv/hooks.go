package testenv

import (
	"context"

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
