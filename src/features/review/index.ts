// What other modules may use of this feature: everything else in it is private.
export type * from './common/afterWriteReviews';
export type * from './common/blobStore';
export * from './common/operationStatus';
export * from './common/reviewedContent';
