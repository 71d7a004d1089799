package migrate

import "gorm.io/gorm"

// The migrations' own names, for the tests of package migrate_test, which
// migrate through the store.

type (
	SchemaMigration = schemaMigration
	V1User          = v1User
	V1Post          = v1Post
	V7Block         = v7Block
	V7Mute          = v7Mute
)

// Steps are the versioned steps, in order.
var Steps = migrations

// TableOptions is db with the options Apply makes tables with.
func TableOptions(db *gorm.DB, mysql bool) *gorm.DB { return Target{MySQL: mysql}.tableOptions(db) }
