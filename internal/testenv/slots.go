package testenv

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"feedservice/internal/slot"
)

// Redis Cluster refuses a command whose keys live in different hash slots
// (CROSSSLOT), and go-redis splits a MULTI/EXEC transaction over several
// slots into one transaction per slot, silently losing its atomicity. The
// slot check below makes the single-Redis run of the suite prove what the
// cluster run shows too: every command, and every transaction as a whole,
// touches one slot.

// CrossSlotError is what the slot check makes of a command or transaction
// whose keys are in more than one slot, as Redis Cluster would refuse it.
type CrossSlotError struct {
	Command string
	Keys    []string
}

func (e *CrossSlotError) Error() string {
	return fmt.Sprintf("CROSSSLOT (slot check): %s touches keys in different hash slots: %q", e.Command, e.Keys)
}

// CheckSlots makes every command of rdb that touches keys of more than one
// hash slot fail the test, and fail itself (not sent) with a
// *CrossSlotError. A MULTI/EXEC transaction counts as one command over the
// keys of all of its commands. The key positions of each command come from
// the server's COMMAND table.
func CheckSlots(t testing.TB, rdb redis.UniversalClient) {
	t.Helper()
	table, err := commandTable(rdb)
	if err != nil {
		t.Fatalf("slot check: read the COMMAND table: %v", err)
	}
	h := &slotHook{table: table, report: t.Errorf}
	var mu sync.Mutex
	done := false
	h.report = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done { // a command after the test ended still fails, unreported
			t.Errorf(format, args...)
		}
	}
	t.Cleanup(func() {
		mu.Lock()
		done = true
		mu.Unlock()
	})
	rdb.AddHook(h)
}

var (
	tableMu   sync.Mutex
	tableInfo map[string]*redis.CommandInfo
)

// commandTable reads the COMMAND table once per test binary.
func commandTable(rdb redis.UniversalClient) (map[string]*redis.CommandInfo, error) {
	tableMu.Lock()
	defer tableMu.Unlock()
	if tableInfo == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		info, err := rdb.Command(ctx).Result()
		if err != nil {
			return nil, err
		}
		tableInfo = info
	}
	return tableInfo, nil
}

// slotHook is the go-redis hook of CheckSlots.
type slotHook struct {
	table  map[string]*redis.CommandInfo
	report func(format string, args ...any)
}

func (h *slotHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(ctx, network, addr)
	}
}

func (h *slotHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.check(cmd.Name(), h.keys(cmd.Args())); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (h *slotHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "multi" {
			// A transaction: one slot for all of its keys.
			var keys []string
			var names []string
			for _, cmd := range cmds {
				keys = append(keys, h.keys(cmd.Args())...)
				names = append(names, cmd.Name())
			}
			if err := h.check(strings.Join(names, "+"), keys); err != nil {
				for _, cmd := range cmds {
					cmd.SetErr(err)
				}
				return err
			}
			return next(ctx, cmds)
		}
		// A plain pipeline: each command on its own (a cluster client sends
		// each to the node of its slot).
		var first error
		for _, cmd := range cmds {
			if err := h.check(cmd.Name(), h.keys(cmd.Args())); err != nil {
				cmd.SetErr(err)
				if first == nil {
					first = err
				}
			}
		}
		if first != nil {
			return first
		}
		return next(ctx, cmds)
	}
}

// check reports and returns a *CrossSlotError when keys span several slots.
func (h *slotHook) check(name string, keys []string) error {
	for _, k := range keys[min(1, len(keys)):] {
		if slot.Of(k) != slot.Of(keys[0]) {
			err := &CrossSlotError{Command: name, Keys: keys}
			h.report("%v", err)
			return err
		}
	}
	return nil
}

// keys lists the keys a command touches.
func (h *slotHook) keys(args []any) []string {
	if len(args) == 0 {
		return nil
	}
	name := strings.ToLower(fmt.Sprint(args[0]))
	arg := func(i int) string {
		if i < 0 || i >= len(args) {
			return ""
		}
		return fmt.Sprint(args[i])
	}
	// numKeys returns the keys counted by the number at args[i].
	numKeys := func(i int) []string {
		n, err := strconv.Atoi(arg(i))
		if err != nil {
			return nil
		}
		var out []string
		for j := i + 1; j <= i+n && j < len(args); j++ {
			out = append(out, arg(j))
		}
		return out
	}
	// The commands whose keys move: the COMMAND table gives no positions.
	switch name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro",
		"zunion", "zinter", "zdiff", "zintercard", "sintercard", "lmpop", "zmpop":
		return numKeys(2)
	case "zunionstore", "zinterstore", "zdiffstore":
		return append([]string{arg(1)}, numKeys(2)...)
	case "blmpop", "bzmpop":
		return numKeys(2)
	case "xread", "xreadgroup":
		for i := range args {
			if strings.EqualFold(arg(i), "streams") {
				rest := args[i+1:]
				var out []string
				for j := range len(rest) / 2 {
					out = append(out, fmt.Sprint(rest[j]))
				}
				return out
			}
		}
		return nil
	case "sort", "sort_ro":
		out := []string{arg(1)}
		for i := 2; i+1 < len(args); i++ {
			if strings.EqualFold(arg(i), "store") {
				out = append(out, arg(i+1))
			}
		}
		return out
	}
	info := h.table[name]
	if info == nil || info.FirstKeyPos <= 0 {
		return nil
	}
	last := int(info.LastKeyPos)
	if last < 0 {
		last += len(args)
	}
	step := max(int(info.StepCount), 1)
	var out []string
	for i := int(info.FirstKeyPos); i <= last && i < len(args); i += step {
		out = append(out, arg(i))
	}
	return out
}
