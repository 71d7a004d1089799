package store

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	mysqldriver "github.com/go-sql-driver/mysql"
)

// MySQL server errors that mean the server is going away or gone, not that
// the statement was wrong.
const (
	erServerShutdown    = 1053 // ER_SERVER_SHUTDOWN
	erConnectionKilled  = 1927 // ER_CONNECTION_KILLED
	erServerIsReadOnly  = 1290 // ER_OPTION_PREVENTS_STATEMENT (read-only during failover)
	erTooManyConnection = 1040 // ER_CON_COUNT_ERROR
	// The sharded layout's head relays a data node it cannot reach so.
	erNetReadError         = 1158  // ER_NET_READ_ERROR: the node's connection broke mid-statement
	erConnectToForeignData = 1429  // ER_CONNECT_TO_FOREIGN_DATA_SOURCE: the node refuses connections
	erSpiderRemoteGoneAway = 12701 // Spider: the node went away
)

// IsUnavailable says whether err means the database could not be reached
// or went away mid-statement (refused or cut connections, a server shutting
// down), as opposed to a fault of the statement. A transaction that failed
// this way either committed whole or not at all; the client may retry.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case erServerShutdown, erConnectionKilled, erServerIsReadOnly, erTooManyConnection,
			erNetReadError, erConnectToForeignData, erSpiderRemoteGoneAway:
			return true
		}
		return false
	}
	var op *net.OpError
	return errors.As(err, &op) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, mysqldriver.ErrInvalidConn) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}
