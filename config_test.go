package main

import (
	"strings"
	"testing"

	"feedservice/dataloader"
)

// TestLoaderWaitBounds: -loader-wait takes up to dataloader.MaxWait and
// refuses a nanosecond more, zero and a negative wait.
func TestLoaderWaitBounds(t *testing.T) {
	c, err := parseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.LoaderWait != dataloader.DefaultWait {
		t.Fatalf("default loader wait %s, want %s", c.LoaderWait, dataloader.DefaultWait)
	}
	c, err = parseConfig([]string{"-loader-wait", dataloader.MaxWait.String()})
	if err != nil || c.LoaderWait != dataloader.MaxWait {
		t.Fatalf("-loader-wait %s: %v (wait %s)", dataloader.MaxWait, err, c.LoaderWait)
	}
	for _, bad := range []string{(dataloader.MaxWait + 1).String(), "0s", "-1ms"} {
		if _, err := parseConfig([]string{"-loader-wait", bad}); err == nil || !strings.Contains(err.Error(), "-loader-wait") {
			t.Errorf("-loader-wait %s: %v, want a -loader-wait error", bad, err)
		}
	}
	t.Setenv("LOADER_WAIT", (dataloader.MaxWait + 1).String())
	if _, err := parseConfig(nil); err == nil {
		t.Errorf("LOADER_WAIT=%s accepted", dataloader.MaxWait+1)
	}
}
