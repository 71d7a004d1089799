package store

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	mysqldriver "github.com/go-sql-driver/mysql"
)

// A database that cannot be reached, or went away mid-statement, is
// unavailable; a statement's own fault is not.
func TestIsUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("create post: %w", refused), true},
		{fmt.Errorf("commit: %w", mysqldriver.ErrInvalidConn), true},
		{driver.ErrBadConn, true},
		{&mysqldriver.MySQLError{Number: 1053, Message: "Server shutdown in progress"}, true},
		// A Spider head relaying a data node it cannot reach.
		{&mysqldriver.MySQLError{Number: 1429, Message: "Unable to connect to foreign data source: feed_127_0_0_1_3322_root"}, true},
		{&mysqldriver.MySQLError{Number: 12701, Message: "Remote MariaDB server has gone away"}, true},
		{&mysqldriver.MySQLError{Number: 1158, Message: "Got an error reading communication packets"}, true},
		{&mysqldriver.MySQLError{Number: 12606, Message: "This xid member already exists"}, false},
		{&mysqldriver.MySQLError{Number: 1062, Message: "Duplicate entry"}, false},
		{&mysqldriver.MySQLError{Number: 1146, Message: "Table doesn't exist"}, false},
		{errors.New("dial tcp 10.0.0.1:3306: connection refused"), false}, // text alone proves nothing
		{ErrNotFound, false},
		{nil, false},
	} {
		if got := IsUnavailable(c.err); got != c.want {
			t.Errorf("IsUnavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
