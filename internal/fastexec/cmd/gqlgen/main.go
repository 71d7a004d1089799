// Command gqlgen is `gqlgen generate` with the fast executor's plugin
// added: graph/generated.go as gqlgen writes it, and graph/fastexec.go
// beside it. `go generate ./...` (make generate) runs it.
package main

import (
	"fmt"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"feedservice/internal/fastexec/plugin"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen: loading the config:", err)
		os.Exit(2)
	}
	if err := api.Generate(cfg, api.AddPlugin(plugin.New())); err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen:", err)
		os.Exit(3)
	}
}
