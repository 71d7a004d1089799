package store

import (
	"fmt"
	"strings"
	"testing"
)

// A traced CREATE SERVER keeps no password: the literal that store/migrate
// writes (quote, there), quotes and backslashes included, becomes '***'.
func TestRedactPasswords(t *testing.T) {
	quote := func(s string) string { return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'" }
	for _, password := range []string{"s3cret", `it's`, `back\slash`, `'`, ""} {
		stmt := fmt.Sprintf("CREATE SERVER IF NOT EXISTS feed_h_1_u FOREIGN DATA WRAPPER mysql OPTIONS (HOST %s, PORT 3321, USER %s, PASSWORD %s)",
			quote("h"), quote("u"), quote(password))
		got := redactPasswords(stmt)
		if _, rest, _ := strings.Cut(got, "PASSWORD "); rest != "'***')" {
			t.Errorf("password %q: traced as %s", password, got)
		}
		if !strings.Contains(got, "USER 'u'") {
			t.Errorf("password %q: the rest of the statement changed: %s", password, got)
		}
	}
}
