
      export type PossibleTypesResultData = {
  "possibleTypes": {
    "HomeEntry": [
      "FeedItem",
      "PromotedPost",
      "SuggestedUser"
    ],
    "Node": [
      "List",
      "Post",
      "User"
    ]
  }
};
      const result: PossibleTypesResultData = {
  "possibleTypes": {
    "HomeEntry": [
      "FeedItem",
      "PromotedPost",
      "SuggestedUser"
    ],
    "Node": [
      "List",
      "Post",
      "User"
    ]
  }
};
      export default result;
    