package store

import (
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"feedservice/models"
)

// appendEvent writes an outbox event inside the caller's transaction, so the
// event exists exactly when the change it describes is committed.
func appendEvent(tx *gorm.DB, kind string, payload any, at time.Time) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("outbox payload: %w", err)
	}
	return tx.Create(&models.OutboxEvent{Kind: kind, Payload: string(b), CreatedAt: at}).Error
}
