package api

import "net/http"

// The Content-Security-Policy of the embedded pages: their own scripts,
// styles, workers and endpoint only, never framed (clickjacking), no
// plugins, no <base> or form posts elsewhere.
const (
	// appCSP is the React app's (/app/): its script and stylesheet files;
	// React sets inline styles through the DOM, which a CSP allows.
	appCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	// graphiqlCSP is GraphiQL's (/ and /graphiql/): its Monaco editor runs
	// workers from its own files and adds <style> elements at run time,
	// which only 'unsafe-inline' allows for styles (scripts stay 'self');
	// its stylesheets embed icons as data: URLs.
	graphiqlCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
		"connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

// withPageHeaders sends csp with a page, and refuses framing to browsers
// that predate frame-ancestors.
func withPageHeaders(csp string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// withSecurityHeaders tells browsers to take every response as the type
// it says it is (no sniffing a JSON error into HTML), and to send other
// sites no more than this server's origin as the referrer.
func withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "strict-origin-when-cross-origin")
		next.ServeHTTP(w, r)
	})
}
