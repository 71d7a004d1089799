package resolvers

import (
	"context"
	"strings"
	"testing"

	"feedservice/graph"
)

// TestSubscriptionFieldsArePriced walks the schema's Subscription fields:
// each must have a price of its own, since every event runs its selection
// again. A field left to gqlgen's default costs 1 plus its children, which
// made an unreadCount event cost 1 where the same count in a query costs
// UnreadCountCost.
func TestSubscriptionFieldsArePriced(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{Complexity: Complexity()})
	fields := es.Schema().Subscription.Fields
	if len(fields) == 0 {
		t.Fatal("the schema has no Subscription fields")
	}
	const child = 7
	for _, f := range fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		if _, ok := es.Complexity(context.Background(), "Subscription", f.Name, child, map[string]any{}); !ok {
			t.Errorf("Subscription.%s has gqlgen's default price (1 plus its children); price it as its query twin in Complexity", f.Name)
		}
	}
	twins := []struct{ subscription, object, field string }{
		{"unreadCount", "FeedConnection", "unreadCount"},
		{"unreadCount", "HomeConnection", "unreadCount"},
		{"unreadBadge", "FeedConnection", "unreadCount"},
	}
	for _, tw := range twins {
		sub, _ := es.Complexity(context.Background(), "Subscription", tw.subscription, child, map[string]any{})
		query, ok := es.Complexity(context.Background(), tw.object, tw.field, child, map[string]any{})
		if !ok || sub != query {
			t.Errorf("Subscription.%s costs %d, its twin %s.%s %d (priced: %v)", tw.subscription, sub, tw.object, tw.field, query, ok)
		}
	}
	one := 1
	added, _ := es.Complexity(context.Background(), "Subscription", "feedItemAdded", child, map[string]any{})
	if page := connectionCost(child, &one, nil, nil, nil); added != page {
		t.Errorf("Subscription.feedItemAdded costs %d, a feed page of one entry %d", added, page)
	}
}

// TestUnreadCountCappedIsPricedAsTheCount: unreadCountCapped reads the
// unread count, so asked alone it costs what unreadCount costs; priced as
// a plain field (1) it would buy the count, near enough, for nothing.
func TestUnreadCountCappedIsPricedAsTheCount(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{Complexity: Complexity()})
	for _, object := range []string{"FeedConnection", "HomeConnection"} {
		count, _ := es.Complexity(context.Background(), object, "unreadCount", 0, map[string]any{})
		capped, ok := es.Complexity(context.Background(), object, "unreadCountCapped", 0, map[string]any{})
		if !ok || capped != count || count != UnreadCountCost {
			t.Errorf("%s.unreadCountCapped costs %d (priced: %v), unreadCount %d; want both UnreadCountCost (%d)", object, capped, ok, count, UnreadCountCost)
		}
	}
}

// TestConnectionFieldsArePriced walks every field of the schema that
// answers a connection: each must be priced by its page, not by gqlgen's
// default (1 plus its children), which would sell a page of 100 entries
// for the price of one.
func TestConnectionFieldsArePriced(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{Complexity: Complexity()})
	for _, def := range es.Schema().Types {
		if strings.HasPrefix(def.Name, "__") {
			continue
		}
		for _, f := range def.Fields {
			if f.Type == nil || !strings.HasSuffix(f.Type.Name(), "Connection") {
				continue
			}
			if _, ok := es.Complexity(context.Background(), def.Name, f.Name, 7, map[string]any{}); !ok {
				t.Errorf("%s.%s answers a %s at gqlgen's default price: price it by its page in Complexity", def.Name, f.Name, f.Type.Name())
			}
		}
	}
}
