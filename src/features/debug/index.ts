// What other modules may use of this feature: everything else in it is private.
export type * from './common/debugPort';
export { DEBUGGEE_NOT_SANDBOXED } from './common/debugPort';
