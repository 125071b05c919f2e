// What other modules may use of this feature: everything else in it is private.
export type * from './common/tasksPort';
