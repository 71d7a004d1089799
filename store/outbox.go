package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"feedservice/models"
)

// appendEvent writes an outbox event inside the caller's transaction, so the
// event exists exactly when the change it describes is committed.
// On the sharded layout the event lives on the shard of the user whose
// change it is (eventOwner).
func (s *Store) appendEvent(tx *gorm.DB, kind string, payload any, at time.Time) error {
	ev, err := newEvent(kind, payload, at)
	if err != nil {
		return err
	}
	ev.TraceParent = TraceParent(tx.Statement.Context)
	events := []models.OutboxEvent{ev}
	if err := s.assignEventIDs(tx, events, []int64{eventOwner(payload)}); err != nil {
		return err
	}
	return tx.Create(&events[0]).Error
}

// newEvent is the outbox event of kind with payload, at.
func newEvent(kind string, payload any, at time.Time) (models.OutboxEvent, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return models.OutboxEvent{}, fmt.Errorf("outbox payload: %w", err)
	}
	return models.OutboxEvent{Kind: kind, Payload: string(b), CreatedAt: at}, nil
}

// PendingEvents lists committed events not yet dispatched, oldest first.
func (s *Store) PendingEvents(ctx context.Context, limit int) ([]models.OutboxEvent, error) {
	var events []models.OutboxEvent
	err := s.db.WithContext(ctx).Where("dispatched_at IS NULL").Order("id").Limit(limit).Find(&events).Error
	return events, err
}

// MarkDispatched records that events reached the fan-out stream.
func (s *Store) MarkDispatched(ctx context.Context, ids []int64, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Model(&models.OutboxEvent{}).Where("id IN ?", ids).Update("dispatched_at", at).Error
}

// OutboxLag counts the undispatched events and the time of the oldest.
func (s *Store) OutboxLag(ctx context.Context) (int64, time.Time, error) {
	var n int64
	pending := s.db.WithContext(ctx).Model(&models.OutboxEvent{}).Where("dispatched_at IS NULL")
	if err := pending.Count(&n).Error; err != nil || n == 0 {
		return n, time.Time{}, err
	}
	var oldest []models.OutboxEvent // dispatched meanwhile, it is not found
	err := s.db.WithContext(ctx).Where("dispatched_at IS NULL").Order("id").Limit(1).Find(&oldest).Error
	if len(oldest) == 0 {
		return 0, time.Time{}, err
	}
	return n, oldest[0].CreatedAt, err
}

// PurgeDispatched deletes events dispatched before t.
func (s *Store) PurgeDispatched(ctx context.Context, before time.Time) error {
	return s.db.WithContext(ctx).Where("dispatched_at < ?", before).Delete(&models.OutboxEvent{}).Error
}
