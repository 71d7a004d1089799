// Package web serves the React + Apollo app (this folder, built by
// `make web` into dist/) from files embedded in the binary, so that the
// server shows it with no Node installed.
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:generate go run favicon_gen.go

//go:embed all:dist
var dist embed.FS

//go:embed favicon.ico
var favicon []byte

// Favicon serves the site's icon (favicon.ico, drawn by favicon_gen.go),
// which browsers ask for at /favicon.ico on every page, GraphiQL's too.
func Favicon() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/x-icon")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Write(favicon)
	})
}

// Handler serves the app mounted at prefix (such as "/app/"): the built
// files as they are, and index.html for every other path under prefix,
// since the app routes on the client (/app/u/alice is index.html too).
func Handler(prefix string) http.Handler {
	files, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err)
	}
	return SPA(files, prefix)
}

// SPA serves a single-page app's files from files, mounted at prefix.
// Vite puts content-hashed names under assets/: those may be cached for a
// year. index.html is revalidated on each load, so a new build shows at
// once.
func SPA(files fs.FS, prefix string) http.Handler {
	static := http.StripPrefix(strings.TrimSuffix(prefix, "/"), http.FileServerFS(files))
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic("web: no index.html in the built files: run `make web`")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean(r.URL.Path), strings.TrimSuffix(prefix, "/"))
		name = strings.TrimPrefix(name, "/")
		if name != "" && name != "index.html" {
			if info, err := fs.Stat(files, name); err == nil && !info.IsDir() {
				if strings.HasPrefix(name, "assets/") {
					w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
				}
				static.ServeHTTP(w, r)
				return
			}
			if strings.HasPrefix(name, "assets/") {
				// A missing asset is a 404, not the app's page.
				http.NotFound(w, r)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(index)
	})
}
