
      export type PossibleTypesResultData = {
  "possibleTypes": {
    "HomeEntry": [
      "FeedItem",
      "PromotedPost",
      "SuggestedUser"
    ],
    "Node": [
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
      "Post",
      "User"
    ]
  }
};
      export default result;
    