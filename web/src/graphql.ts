// Every GraphQL document the app sends. Their TypeScript types are not
// written here: graphql-codegen makes them from the server's schema and
// these documents into src/gql/ (`npm run codegen`, see codegen.ts), and
// graphql() returns each document typed with its data and variables. The
// types below only name parts of the generated ones for the components.
import { graphql } from './gql';
import type { BlockedUsersQuery, FollowersQuery, HomeQuery } from './gql/graphql';

export type {
  FeedEdgeFieldsFragment as FeedEdge,
  PostFieldsFragment as Post,
  ProfileFieldsFragment as Profile,
  UserSummaryFragment as UserSummary,
} from './gql/graphql';

/** One entry of the home connection, and its three kinds. */
export type HomeEdge = HomeQuery['home']['edges'][number];
export type FeedItem = Extract<HomeEdge['node'], { __typename: 'FeedItem' }>;
export type SuggestedUser = Extract<HomeEdge['node'], { __typename: 'SuggestedUser' }>;
export type PromotedPost = Extract<HomeEdge['node'], { __typename: 'PromotedPost' }>;

/** One entry of a followers or following list. */
export type UserEdge = NonNullable<NonNullable<FollowersQuery['user']>['followers']>['edges'][number];

/** One entry of the viewer's blocked or muted list. */
export type RelatedUserEdge = BlockedUsersQuery['blockedUsers']['edges'][number];

// Fragments: a document that spreads one gets it from the generated code.

export const USER_SUMMARY = graphql(`
  fragment UserSummary on User {
    id
    username
    displayName
  }
`);

export const POST_FIELDS = graphql(`
  fragment PostFields on Post {
    id
    body
    createdAt
    repostCount
    author { ...UserSummary }
    repostOf {
      id
      body
      createdAt
      repostCount
      author { ...UserSummary }
    }
  }
`);

export const FEED_EDGE = graphql(`
  fragment FeedEdgeFields on FeedEdge {
    cursor
    node {
      addedAt
      post { ...PostFields }
      reposters { ...UserSummary }
    }
  }
`);

export const PROFILE_FIELDS = graphql(`
  fragment ProfileFields on User {
    ...UserSummary
    bio
    followerCount
    followingCount
    postCount
    viewerIsFollowing
    followsViewer
    viewerHasBlocked
    viewerHasMuted
    isProtected
    viewerHasRequestedFollow
  }
`);

// A block drops the follows between the two both ways: both users come
// back with their new counts.
export const BLOCK_PAYLOAD = graphql(`
  fragment BlockPayloadFields on BlockPayload {
    user { ...ProfileFields }
    viewer { ...ProfileFields }
  }
`);

export const FOLLOW_PAYLOAD = graphql(`
  fragment FollowPayloadFields on FollowPayload {
    user { ...ProfileFields }
    viewer { ...ProfileFields }
  }
`);

// ---------------------------------------------------------------------------
// Accounts

export const SIGN_UP = graphql(`
  mutation SignUp($input: SignUpInput!) {
    signUp(input: $input) { token user { ...UserSummary } }
  }
`);

export const LOG_IN = graphql(`
  mutation LogIn($input: LogInInput!) {
    logIn(input: $input) { token user { ...UserSummary } }
  }
`);

export const VIEWER = graphql(`
  query Viewer {
    viewer { ...UserSummary }
  }
`);

// ---------------------------------------------------------------------------
// Home feed

// The home connection: the feed's entries with a promoted post or a
// suggested user in every Nth place (the server's HOME_INSERT_EVERY).
// Its cursors are home cursors; feedCursor is a feed item's feed cursor,
// which markFeedRead takes.
export const HOME = graphql(`
  query Home($first: Int, $after: String, $last: Int, $before: String) {
    home(first: $first, after: $after, last: $last, before: $before) {
      edges {
        cursor
        feedCursor
        node {
          __typename
          ... on FeedItem {
            addedAt
            post { ...PostFields }
            reposters { ...UserSummary }
          }
          ... on SuggestedUser {
            followedByCount
            user { ...UserSummary viewerIsFollowing }
          }
          ... on PromotedPost {
            post { ...PostFields }
          }
        }
      }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      unreadCount
    }
  }
`);

export const DISMISS_HOME_ENTRY = graphql(`
  mutation DismissHomeEntry($id: ID!) {
    dismissHomeEntry(id: $id) { dismissedId }
  }
`);

export const MARK_FEED_READ = graphql(`
  mutation MarkFeedRead($upTo: String) {
    markFeedRead(upTo: $upTo) { unreadCount }
  }
`);

// The red dot with its cap: capped says the count stopped at the server's
// MAX_UNREAD_COUNT, so that more may be unread.
export const UNREAD_BADGE = graphql(`
  subscription UnreadBadge {
    unreadBadge { count capped }
  }
`);

export const FEED_ITEM_ADDED = graphql(`
  subscription FeedItemAdded {
    feedItemAdded { ...FeedEdgeFields }
  }
`);

// ---------------------------------------------------------------------------
// Posts

export const CREATE_POST = graphql(`
  mutation CreatePost($body: String!) {
    createPost(input: { body: $body }) { post { ...PostFields } }
  }
`);

export const REPOST = graphql(`
  mutation Repost($postId: ID!) {
    repost(postId: $postId) { post { ...PostFields } }
  }
`);

export const DELETE_POST = graphql(`
  mutation DeletePost($id: ID!) {
    deletePost(id: $id) { deletedPostId }
  }
`);

// ---------------------------------------------------------------------------
// Profiles

export const PROFILE = graphql(`
  query Profile($username: String!) {
    user(username: $username) { ...ProfileFields }
  }
`);

export const TIMELINE = graphql(`
  query Timeline($username: String!, $first: Int, $after: String) {
    user(username: $username) {
      id
      timeline(first: $first, after: $after) {
        edges { cursor node { ...PostFields } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`);

// Followers and Following share one shape: the list is under the field
// that the query asks for.
export const FOLLOWERS = graphql(`
  query Followers($username: String!, $first: Int, $after: String) {
    user(username: $username) {
      id
      followers(first: $first, after: $after) {
        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`);

export const FOLLOWING = graphql(`
  query Following($username: String!, $first: Int, $after: String) {
    user(username: $username) {
      id
      following(first: $first, after: $after) {
        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`);

// A page of a relation list by number: offset skips the newest entries
// (a page jump); totalCount numbers the pages.
export const FOLLOWERS_PAGE = graphql(`
  query FollowersPage($username: String!, $first: Int, $offset: Int) {
    user(username: $username) {
      id
      followers(first: $first, offset: $offset) {
        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        totalCount
      }
    }
  }
`);

export const FOLLOWING_PAGE = graphql(`
  query FollowingPage($username: String!, $first: Int, $offset: Int) {
    user(username: $username) {
      id
      following(first: $first, offset: $offset) {
        edges { cursor followedAt node { ...UserSummary viewerIsFollowing followsViewer } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        totalCount
      }
    }
  }
`);

export const FOLLOW = graphql(`
  mutation Follow($userId: ID!) {
    follow(userId: $userId) { ...FollowPayloadFields }
  }
`);

export const UNFOLLOW = graphql(`
  mutation Unfollow($userId: ID!) {
    unfollow(userId: $userId) { ...FollowPayloadFields }
  }
`);

// ---------------------------------------------------------------------------
// Protected accounts

// The switch: on, new followers ask first and the posts are for the
// followers only; off approves every waiting request.
export const SET_PROTECTED = graphql(`
  mutation SetProtected($on: Boolean!) {
    updateProfile(input: { isProtected: $on }) { ...ProfileFields }
  }
`);

export const FOLLOW_REQUESTS = graphql(`
  query FollowRequests($first: Int, $after: String) {
    followRequests(first: $first, after: $after) {
      totalCount
      edges { cursor since node { ...UserSummary } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`);

export const APPROVE_FOLLOW_REQUEST = graphql(`
  mutation ApproveFollowRequest($userId: ID!) {
    approveFollowRequest(userId: $userId) { ...FollowPayloadFields }
  }
`);

export const REJECT_FOLLOW_REQUEST = graphql(`
  mutation RejectFollowRequest($userId: ID!) {
    rejectFollowRequest(userId: $userId) { ...FollowPayloadFields }
  }
`);

// ---------------------------------------------------------------------------
// Lists

export const LIST_FIELDS = graphql(`
  fragment ListFields on List {
    id
    name
    memberCount
    createdAt
  }
`);

// The viewer's lists, ten at a time: the Lists page and a profile's list
// switches page through them with after (merged in the cache: apollo.ts).
export const LISTS = graphql(`
  query Lists($after: String) {
    lists(first: 10, after: $after) {
      totalCount
      edges { cursor node { ...ListFields } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

// A list's members' ids, a full page at a time: a profile's switch of the
// list reads on until it finds the profile's user or the members end.
export const LIST_MEMBERS = graphql(`
  query ListMembers($id: ID!, $after: String) {
    node(id: $id) {
      ... on List {
        id
        members(first: 100, after: $after) {
          edges { cursor node { id } }
          pageInfo { hasNextPage endCursor }
        }
      }
    }
  }
`);

export const LIST = graphql(`
  query List($id: ID!, $first: Int, $after: String) {
    node(id: $id) {
      ... on List {
        ...ListFields
        members(first: 20) {
          edges { cursor since node { ...UserSummary } }
          pageInfo { hasNextPage endCursor }
        }
        feed(first: $first, after: $after) {
          edges { ...FeedEdgeFields }
          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        }
      }
    }
  }
`);

// The next 20 members of a list, for its page's More members (merged into
// the list's members in the cache: apollo.ts).
export const LIST_MEMBER_PAGE = graphql(`
  query ListMemberPage($id: ID!, $after: String) {
    node(id: $id) {
      ... on List {
        id
        members(first: 20, after: $after) {
          edges { cursor since node { ...UserSummary } }
          pageInfo { hasNextPage endCursor }
        }
      }
    }
  }
`);

export const CREATE_LIST = graphql(`
  mutation CreateList($name: String!) {
    createList(name: $name) { list { ...ListFields } }
  }
`);

export const RENAME_LIST = graphql(`
  mutation RenameList($listId: ID!, $name: String!) {
    renameList(listId: $listId, name: $name) { list { ...ListFields } }
  }
`);

export const DELETE_LIST = graphql(`
  mutation DeleteList($listId: ID!) {
    deleteList(listId: $listId) { deletedListId }
  }
`);

export const ADD_TO_LIST = graphql(`
  mutation AddToList($listId: ID!, $userId: ID!) {
    addToList(listId: $listId, userId: $userId) { list { ...ListFields } }
  }
`);

export const REMOVE_FROM_LIST = graphql(`
  mutation RemoveFromList($listId: ID!, $userId: ID!) {
    removeFromList(listId: $listId, userId: $userId) { list { ...ListFields } }
  }
`);

// ---------------------------------------------------------------------------
// Blocks and mutes

export const BLOCK = graphql(`
  mutation Block($userId: ID!) {
    block(userId: $userId) { ...BlockPayloadFields }
  }
`);

export const UNBLOCK = graphql(`
  mutation Unblock($userId: ID!) {
    unblock(userId: $userId) { ...BlockPayloadFields }
  }
`);

export const MUTE = graphql(`
  mutation Mute($userId: ID!) {
    mute(userId: $userId) { user { ...ProfileFields } }
  }
`);

export const UNMUTE = graphql(`
  mutation Unmute($userId: ID!) {
    unmute(userId: $userId) { user { ...ProfileFields } }
  }
`);

// The viewer's own lists, most recent first. Blocked and muted share one
// shape: the list is under the field that the query asks for. Each row
// carries both flags, so that its undo button shows what it would do.
export const BLOCKED_USERS = graphql(`
  query BlockedUsers($first: Int, $after: String) {
    blockedUsers(first: $first, after: $after) {
      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      totalCount
    }
  }
`);

export const MUTED_USERS = graphql(`
  query MutedUsers($first: Int, $after: String) {
    mutedUsers(first: $first, after: $after) {
      edges { cursor since node { ...UserSummary viewerHasBlocked viewerHasMuted } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      totalCount
    }
  }
`);
