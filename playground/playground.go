// Package playground serves the server's GraphiQL page (this folder, built
// by `make web` into dist/) from files embedded in the binary. Everything
// the page loads comes from the server: it works with no internet and
// under a strict Content-Security-Policy of 'self'.
package playground

import (
	"embed"
	"io/fs"
	"net/http"

	"feedservice/web"
)

//go:embed all:dist
var dist embed.FS

// Prefix is where the page's scripts, styles and workers are served (the
// base of playground/vite.config.js).
const Prefix = "/graphiql/"

// Handler serves the page: index.html at any path that is not one of its
// files, the files themselves under Prefix. Mount it at "GET /{$}" and at
// "GET " + Prefix.
func Handler() http.Handler {
	files, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err)
	}
	return web.SPA(files, Prefix)
}
