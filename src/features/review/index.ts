// What other modules may use of this feature: everything else in it is private.
export * from './common/afterWriteReviews';
export * from './common/blobStore';
export * from './common/operationStatus';
export * from './common/reviewedContent';
