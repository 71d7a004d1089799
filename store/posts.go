package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"feedservice/models"
)

// ErrForbidden is returned when a user changes a post that is not theirs.
var ErrForbidden = errors.New("forbidden")

// CreatePost inserts a post (or a repost, see Repost) with the author's count
// and a post_created event in one transaction.
func (s *Store) CreatePost(ctx context.Context, p *models.Post) error {
	return s.transaction(ctx, func(tx *gorm.DB) error {
		if err := bumpPostCount(tx, p.AuthorID, +1); err != nil {
			return err
		}
		return s.insertPost(tx, p)
	})
}

// Repost makes p (with AuthorID and RepostOfID set) a repost of the original
// post. Reposting twice is idempotent: the existing live repost is returned
// with created false. ErrNotFound when the original is missing or deleted.
func (s *Store) Repost(ctx context.Context, p *models.Post) (*models.Post, bool, error) {
	if s.shards != nil {
		return s.repostSharded(ctx, p)
	}
	result, created := p, false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		result, created = p, false
		// The count update comes first: it locks the author's row, so two
		// reposts of one post by one author run one after the other.
		if err := bumpPostCount(tx, p.AuthorID, +1); err != nil {
			return err
		}
		var existing models.Post
		err := tx.Where("author_id = ? AND repost_of_id = ? AND deleted_at IS NULL", p.AuthorID, *p.RepostOfID).Take(&existing).Error
		if err == nil {
			result = &existing
			return errRollback
		}
		if !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		res := tx.Model(&models.Post{}).Where("id = ? AND deleted_at IS NULL", *p.RepostOfID).
			Updates(map[string]any{"repost_count": gorm.Expr("repost_count + 1"), "version": nextVersion})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return ErrNotFound
		}
		created = true
		return s.insertPost(tx, p)
	})
	if errors.Is(err, errRollback) {
		err = nil
	}
	return result, created, err
}

// nextVersion moves a row's version in the statement that changes the row
// (see models.User.Version).
var nextVersion = gorm.Expr("version + 1")

// errRollback rolls a transaction back without it being a failure.
var errRollback = errors.New("rollback")

func (s *Store) insertPost(tx *gorm.DB, p *models.Post) error {
	if err := tx.Create(p).Error; err != nil {
		return err
	}
	return s.appendEvent(tx, models.EventPostCreated, models.PostEventPayload{PostID: p.ID, AuthorID: p.AuthorID, RepostOfID: p.RepostOfID}, p.CreatedAt)
}

func bumpPostCount(tx *gorm.DB, authorID int64, delta int) error {
	res := tx.Model(&models.User{}).Where("id = ?", authorID).
		Updates(map[string]any{"post_count": gorm.Expr("post_count + ?", delta), "version": nextVersion})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return ErrNotFound
	}
	return nil
}

// DeletePost soft-deletes a post of authorID, with the counts it moved and a
// post_deleted event, and returns the post as it was (its RepostOfID says
// which original's count moved). Deleting a deleted post changes nothing
// and succeeds; ErrNotFound for an unknown post, ErrForbidden for someone
// else's.
func (s *Store) DeletePost(ctx context.Context, postID, authorID int64, at time.Time) (*models.Post, error) {
	var p models.Post
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		p = models.Post{}
		if err := tx.Where("id = ?", postID).Take(&p).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrNotFound
			}
			return err
		}
		if p.AuthorID != authorID {
			return ErrForbidden
		}
		res := tx.Model(&models.Post{}).Where("id = ? AND deleted_at IS NULL", postID).
			Updates(map[string]any{"deleted_at": at, "version": nextVersion})
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		if err := bumpPostCount(tx, authorID, -1); err != nil {
			return err
		}
		if p.RepostOfID != nil && s.shards != nil {
			// The original's count and its reposts_by_original row are on
			// its node: through the relay (repostSharded).
			half := &relayed{}
			half.op(relayOp{Op: opRepostRemoved, Post: *p.RepostOfID, Repost: p.ID, Other: p.AuthorID, At: at})
			if err := half.event(tx, models.EventPostDeleted, models.PostEventPayload{PostID: p.ID, AuthorID: p.AuthorID, RepostOfID: p.RepostOfID}, at); err != nil {
				return err
			}
			return s.relay(tx, authorID, *p.RepostOfID, half)
		}
		if p.RepostOfID != nil {
			err := tx.Model(&models.Post{}).Where("id = ? AND repost_count > 0", *p.RepostOfID).
				Updates(map[string]any{"repost_count": gorm.Expr("repost_count - 1"), "version": nextVersion}).Error
			if err != nil {
				return err
			}
		}
		return s.appendEvent(tx, models.EventPostDeleted, models.PostEventPayload{PostID: p.ID, AuthorID: p.AuthorID, RepostOfID: p.RepostOfID}, at)
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// PostsByIDs loads posts, deleted ones included, in one query.
func (s *Store) PostsByIDs(ctx context.Context, ids []int64) ([]*models.Post, error) {
	var posts []*models.Post
	if len(ids) == 0 {
		return posts, nil
	}
	err := s.read(ctx).Where("id IN ?", ids).Find(&posts).Error
	return posts, err
}

// LiveReposts lists the live reposts of the originals, oldest first, by
// original.
func (s *Store) LiveReposts(ctx context.Context, originals []int64) (map[int64][]models.Repost, error) {
	out := map[int64][]models.Repost{}
	if len(originals) == 0 {
		return out, nil
	}
	var rows []struct {
		ID, AuthorID, RepostOfID int64
	}
	if s.shards != nil {
		// On the originals' nodes, one statement each.
		for _, some := range s.byShard(originals) {
			var found []repostByOriginal
			if err := s.db.WithContext(ctx).Where("original_id IN ? AND deleted_at IS NULL", some).Order("id").Find(&found).Error; err != nil {
				return out, err
			}
			for _, r := range found {
				out[r.OriginalID] = append(out[r.OriginalID], models.Repost{ID: r.ID, AuthorID: r.AuthorID})
			}
		}
		return out, nil
	}
	err := s.db.WithContext(ctx).Model(&models.Post{}).Select("id, author_id, repost_of_id").
		Where("repost_of_id IN ? AND deleted_at IS NULL", originals).Order("id").Scan(&rows).Error
	for _, r := range rows {
		out[r.RepostOfID] = append(out[r.RepostOfID], models.Repost{ID: r.ID, AuthorID: r.AuthorID})
	}
	return out, err
}

// TimelinePage lists the live posts and reposts of authorID, keyset-paged by id.
func (s *Store) TimelinePage(ctx context.Context, authorID int64, dir Direction, bound int64, limit int) ([]*models.Post, error) {
	var posts []*models.Post
	q := s.read(ctx).Table(s.on("posts", authorID)).Where("author_id = ? AND deleted_at IS NULL", authorID)
	err := keyset(q, "id", dir, bound).Limit(limit).Find(&posts).Error
	return posts, err
}

// ReposterIDs lists the authors of every repost of original, deleted ones included.
func (s *Store) ReposterIDs(ctx context.Context, original int64) ([]int64, error) {
	var ids []int64
	if s.shards != nil {
		err := s.db.WithContext(ctx).Model(&repostByOriginal{}).Where("original_id = ?", original).Distinct().Pluck("author_id", &ids).Error
		return ids, err
	}
	err := s.db.WithContext(ctx).Model(&models.Post{}).Where("repost_of_id = ?", original).Distinct().Pluck("author_id", &ids).Error
	return ids, err
}
