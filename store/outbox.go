package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
// On the sharded layout it reads each data node's apart, one statement
// each, and keeps the oldest limit of them all; a node that cannot be
// reached is left for the next call, so that the others' events still
// go out (an error only when none answered).
func (s *Store) PendingEvents(ctx context.Context, limit int) ([]models.OutboxEvent, error) {
	if s.shards == nil {
		var events []models.OutboxEvent
		err := s.db.WithContext(ctx).Where("dispatched_at IS NULL").Order("id").Limit(limit).Find(&events).Error
		return events, err
	}
	var events []models.OutboxEvent
	var errs []error
	for shard := range s.shards.n {
		some, err := s.pendingEventsOn(ctx, shard, limit)
		if err != nil {
			errs = append(errs, fmt.Errorf("data node %d: %w", shard, err))
			continue
		}
		events = append(events, some...)
	}
	if len(errs) == s.shards.n {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(events, func(a, b models.OutboxEvent) int { return cmp.Compare(a.ID, b.ID) })
	return events[:min(limit, len(events))], nil
}

// pendingEventsOn is PendingEvents of one data node's events.
func (s *Store) pendingEventsOn(ctx context.Context, shard, limit int) ([]models.OutboxEvent, error) {
	var events []models.OutboxEvent
	err := s.db.WithContext(ctx).Table(s.on("outbox_events", int64(shard))).
		Where("dispatched_at IS NULL").Order("id").Limit(limit).Find(&events).Error
	return events, err
}

// MarkDispatched records that events reached the fan-out stream: on the
// sharded layout, one statement per data node that holds some of them.
func (s *Store) MarkDispatched(ctx context.Context, ids []int64, at time.Time) error {
	for _, some := range s.byShard(ids) {
		if err := s.db.WithContext(ctx).Model(&models.OutboxEvent{}).Where("id IN ?", some).Update("dispatched_at", at).Error; err != nil {
			return err
		}
	}
	return nil
}

// OutboxLag counts the undispatched events and the time of the oldest;
// on the sharded layout, the relay's pending halves too (their events
// are written when they are applied).
func (s *Store) OutboxLag(ctx context.Context) (int64, time.Time, error) {
	n, oldest, err := s.eventLag(ctx)
	if err != nil || s.shards == nil {
		return n, oldest, err
	}
	relays, relayOldest, err := s.relayLag(ctx)
	if err != nil || relays == 0 {
		return n, oldest, err
	}
	if n == 0 || relayOldest.Before(oldest) {
		oldest = relayOldest
	}
	return n + relays, oldest, nil
}

// eventLag counts the undispatched events and the time of the oldest.
func (s *Store) eventLag(ctx context.Context) (int64, time.Time, error) {
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
